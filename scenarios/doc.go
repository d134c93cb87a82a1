// Package scenarios is the catalogue of named edge cases (a Plan, a narrative,
// its sources and the expected verdict per subject) and the generators of
// random Plans.
//
// Each built-in scenario is one file under data/, embedded in the binary and
// read by All and Get. A file reads top to bottom like a story, in the spirit
// of etcd raft's testdata and cockroachdb/datadriven:
//
//	# While the controller's watch is down, a user deletes the Bellerophon
//	# "web" and creates a new one with the same name ...
//	scenario delete-recreate-during-gap
//	title    Delete + recreate during a watch gap arrives as one OnUpdate
//	edge     B8
//	source   k/k#69376: ReplicaSet stuck after its owner was recreated
//	seed     8
//	deadline 2m
//	faults   {latency: {kind: fixed, max: 100ms}}
//
//	# A Bellerophon "web" wants two Pods.
//	object {apiVersion: lab.cachelab.dev/v1alpha1, kind: Bellerophon, metadata: {name: web, namespace: default}, spec: {replicas: 2, version: v1}}
//
//	# Its watch breaks; while it is down the user deletes "web".
//	at 5s faults break bellerophons target=bellerophon
//	at 5100ms user delete bellerophons default/web
//	----
//	# Why the real controller holds:
//	bellerophon: eventual-convergence=pass delete-recreate=pass
//	bellerophon/no-uid-check: eventual-convergence=fail
//
// Lines starting with # are the narrative. A block of them (paragraphs
// separated by a lone #) belongs to the directive that follows it: blocks
// before the first object or step are the introduction, a block before a step
// narrates that step, a block below ---- explains the expectation after it.
//
// Header directives, each on one line, before the timeline: scenario NAME
// (first, equal to the file's base name), title, edge (EDGE-CASES.md entry
// numbers, as "B7, 8"), source REF: NOTE (repeatable), subject (the Plan's
// default subject; default the first expected one), seed, deadline, quiet,
// kubelet readyAfter=DURATION, access,
// param key=value (repeatable, Plan.SubjectParams) and faults (a
// sim.FaultPolicy in YAML flow or JSON, durations as "1.5s").
//
// The timeline: `object BODY` adds an initial object; `at TIME ACTOR OP
// [RESOURCE] [NS/NAME] [key=value ...] [BODY]` adds a sim.Step (keys:
// resource, ns, name, target, code, verb, lag, for, midReconcile,
// notOlderThan, patchType; target=subject aims a fault at the subject under test,
// whatever its name). A BODY is YAML or JSON, either inline from the first "{" (it
// may continue on the next lines until its braces balance) or as the
// indented lines right below the directive. It is the object of create and
// update, the patch of patch.
//
// After a line "----", each line `SUBJECT: invariant=STATUS ...` expects a
// verdict (pass, fail or unknown) of a run of the Plan with that subject.
// Invariant "*" stands for every invariant the subject's other expectations
// do not name; invariants left unnamed are not judged. Expected verdicts
// are written from the narrative, never copied from a run: the package's
// test runs every scenario and fails when a verdict differs.
//
// Below ----, a line `claim SUBJECT: ...` makes a sentence of the story
// checkable against that subject's run: a count of trace records ("five
// ConfigMaps": `claim naivecache: count write actor=setup resource=configmaps
// = 5`), the time of the first such record, or which flip of a sync signal
// is sound or false and when (`claim naivecache: flip quiescence-synced 3
// false at 13s..13200ms`). See Claim for the forms and keys. A claim the run
// does not bear out is a Mismatch, like a verdict that differs.
//
// Every malformed line is reported as "file:line: what is wrong and what
// to do" (a *ParseError wrapping ErrSyntax).
package scenarios
