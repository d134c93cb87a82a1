// Package fidelity measures how faithfully cachelab's fake API server
// (fakeapi, served over HTTP by fakeapi/http) answers like a real
// kube-apiserver.
//
// Fidelity here means: the same operation sequence, sent through real
// client-go to both servers, gets the same observable answers once the
// parts that legitimately differ between two servers are normalized away.
// What counts as observable is written down in Normalize: status codes,
// Status bodies (reason, the body's own code, details: name, group, kind,
// uid, and the field and type of each cause; a field manager conflict's
// message, which names the manager), the fields of an
// object that carry meaning (name, labels, annotations, data/spec/status,
// finalizers, owner references by name, generation, whether a
// deletionTimestamp is set), resourceVersions replaced by their order
// within the case (rv#1, rv#2 ...), UIDs by identities (uid#1 ...), and
// watch events as (type, name, resourceVersion) sequences, and, for
// server-side apply cases, managedFields without their times. Timestamps,
// other managedFields, messages and absolute resourceVersions are dropped: they
// differ between any two servers.
//
// The corpus (Cases) is a list of named operation sequences, each run in a
// fresh namespace named after the case. Each case was run once against a
// real kube-apiserver, etcd and kube-controller-manager (built by `make
// real-apiserver`, see fidelity/realserver) and its normalized answers
// were committed under testdata/transcripts, with the server version and
// the date in each file's header. TestCorpusMatchesRealKubeAPIServer
// replays every case against the fake, inside a synctest bubble, and
// fails on any difference that testdata/known-differences.json does not
// list (and on a listed difference that no longer differs, so that the
// list stays honest). `make fidelity-record` re-records the transcripts
// from a running real server.
package fidelity
