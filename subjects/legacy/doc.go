// Package legacy is an informer assembled from cache.New and the legacy
// DeltaFIFO (the pre-RealFIFO path), so that its differences from today's
// SharedIndexInformer can be shown side by side.
package legacy
