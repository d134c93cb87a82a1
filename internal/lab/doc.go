// Package lab is the orchestration of runs that the cachelab command
// (package cachelabtest/cli) and the user's package cachelabtest share: it
// turns scenarios and plan files into jobs, runs them in synctest bubbles
// (through a Host), judges their traces (the invariants, the controller's
// health, the differential oracle's reference plans), compares verdicts
// with the scenarios' expectations, and writes each run's files (plan,
// trace, report, verdicts) and a batch's index and JUnit XML; it also
// holds campaigns (shards and merges, targeted hunts, exploration,
// reproduction of a failing plan) and the course page.
//
// It is internal: a user's test calls cachelabtest, a user's own cachelab
// binary calls cachelabtest/cli.
package lab
