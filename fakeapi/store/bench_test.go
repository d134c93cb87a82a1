package store

import (
	"fmt"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

// smallConfigMap is the "small object" of the sync benchmark.
func smallConfigMap(i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%06d", i), Labels: map[string]string{"app": "bench"}},
		Data:       map[string]string{"key": fmt.Sprintf("value-%d", i)},
	}
}

// BenchmarkStoreCreate measures one create of a small ConfigMap.
func BenchmarkStoreCreate(b *testing.B) {
	s, _ := newTestStore(b, 0)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, _, err := s.Create(configmapsGVR, "default", smallConfigMap(i), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// fill returns a store holding n small ConfigMaps, the heap it takes and
// the objects' serialized (JSON, as the apiserver sends them) size.
func fill(b *testing.B, n int) (s *Store, heapBytes, jsonBytes uint64) {
	b.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, _ = newTestStore(b, 0)
	for i := range n {
		if _, _, err := s.Create(configmapsGVR, "default", smallConfigMap(i), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	s.res[configmapsGVR].sortedItems()
	runtime.GC()
	runtime.ReadMemStats(&after)
	heapBytes = after.HeapAlloc - before.HeapAlloc
	codec := scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion)
	r := s.res[configmapsGVR]
	for _, stored := range r.objects {
		data, err := apiruntime.Encode(codec, r.decode(stored))
		if err != nil {
			b.Fatal(err)
		}
		jsonBytes += uint64(len(data))
	}
	return s, heapBytes, jsonBytes
}

// BenchmarkStoreSync measures what an informer's initial sync costs the
// store for 10k and 100k small objects: a full consistent LIST (deep
// copies into a typed list) and a WatchList start (the initial events and
// the deep copies the wrapper hands out). It reports ns/object (linear
// growth means the same figure at both sizes) and the store's heap per
// object against the objects' serialized size. cpu-ns/object is the
// process's CPU time (GC included) per object: on a shared machine it is
// steadier than wall time.
func BenchmarkStoreSync(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		s, heap, js := fill(b, n)
		for _, op := range []string{"list", "watchlist"} {
			b.Run(fmt.Sprintf("objects=%d/op=%s", n, op), func(b *testing.B) {
				b.ReportAllocs()
				cpu0, cpuOK := processCPU()
				for b.Loop() {
					switch op {
					case "list":
						_, info, err := s.List(configmapsGVR, "", metav1.ListOptions{}, 0)
						if err != nil || info.Count != n {
							b.Fatalf("list: %d items, %v", info.Count, err)
						}
					case "watchlist":
						evs, _, err := s.WatchStart(configmapsGVR, "", metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}, 0)
						if err != nil || len(evs) != n+1 {
							b.Fatalf("watchlist: %d events, %v", len(evs), err)
						}
						for _, ev := range evs {
							_ = ev.Object.DeepCopyObject()
						}
					}
				}
				if cpu1, ok := processCPU(); ok && cpuOK {
					b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N)/float64(n), "cpu-ns/object")
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/object")
				b.ReportMetric(float64(heap)/float64(n), "heap-B/object")
				b.ReportMetric(float64(js)/float64(n), "json-B/object")
				b.ReportMetric(float64(heap)/float64(js), "heap/json")
			})
		}
		runtime.KeepAlive(s)
	}
}
