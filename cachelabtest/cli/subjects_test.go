package cli

// The subjects register themselves with sim when imported (the cachelab
// binary imports them in its main package).
import (
	_ "github.com/cachelab/cachelab/subjects/bellerophon"
	_ "github.com/cachelab/cachelab/subjects/legacy"
	_ "github.com/cachelab/cachelab/subjects/naivecache"
)
