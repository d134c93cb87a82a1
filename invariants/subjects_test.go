package invariants_test

// The subjects register themselves with sim on import.
import (
	_ "github.com/cachelab/cachelab/subjects/bellerophon"
	_ "github.com/cachelab/cachelab/subjects/legacy"
	_ "github.com/cachelab/cachelab/subjects/naivecache"
)
