package cli

// The subjects register themselves with sim when imported.
import (
	_ "github.com/cachelab/cachelab/subjects/bellerophon"
	_ "github.com/cachelab/cachelab/subjects/legacy"
	_ "github.com/cachelab/cachelab/subjects/naivecache"
)
