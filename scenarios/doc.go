// Package scenarios is the catalogue of named edge cases (a Plan, a narrative,
// its sources and the expected verdict per subject) and the rapid generators
// of random Plans.
package scenarios
