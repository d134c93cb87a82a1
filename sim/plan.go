package sim

import (
	"io"

	"github.com/cachelab/cachelab/sim/plan"
)

// The Plan and its parts are defined in package sim/plan (dependency-free,
// so its reader fuzzes fast); these aliases make them sim's own names.
type (
	// Plan is everything needed to reproduce a run (see plan.Plan).
	Plan = plan.Plan
	// Step is one thing that happens at a virtual time (see plan.Step).
	Step = plan.Step
	// FaultPolicy are the random faults' parameters (see plan.FaultPolicy).
	FaultPolicy = plan.FaultPolicy
	// ContractBreaking are faults that break the API's promises.
	ContractBreaking = plan.ContractBreaking
	// Distribution is a delay distribution (see plan.Distribution).
	Distribution = plan.Distribution
	// Kubelet configures the pod-readiness actor.
	Kubelet = plan.Kubelet
	// Competitor configures the informer-fed competing writer.
	Competitor = plan.Competitor
	// ChildRef names an object by its owner (see plan.ChildRef).
	ChildRef = plan.ChildRef
	// Duration is a time.Duration written in JSON as "1.5s".
	Duration = plan.Duration
	// PlanError is one problem with a plan (file, line, field, message).
	PlanError = plan.PlanError
)

// PlanVersion is the version of the Plan format this code reads and writes.
const PlanVersion = plan.PlanVersion

// Defaults applied by LoadPlan (and Run) to fields left empty.
const (
	// DefaultAccess is the access path of a plan that names none.
	DefaultAccess = plan.DefaultAccess
	// DefaultDeadline is the virtual deadline of a plan that sets none.
	DefaultDeadline = plan.DefaultDeadline
	// DefaultQuiet is the quiet period of a plan that sets none.
	DefaultQuiet = plan.DefaultQuiet
)

// The values plan fields may take (see package plan).
var (
	// Actors are the names a Step's Actor may take.
	Actors = plan.Actors
	// FailNextCodes are the status codes fail-next can inject.
	FailNextCodes = plan.FailNextCodes
	// ErrorCodesAllowed are the codes FaultPolicy.ErrorCodes may list.
	ErrorCodesAllowed = plan.ErrorCodesAllowed
	// DefaultErrorCodes are the codes of random request errors when
	// FaultPolicy.ErrorCodes is empty.
	DefaultErrorCodes = plan.DefaultErrorCodes
	// Verbs are the verbs fail-next may name.
	Verbs = plan.Verbs
	// WriteVerbs are the verbs timeout-next-write may name.
	WriteVerbs = plan.WriteVerbs
	// PatchTypes are the values of Step.PatchType.
	PatchTypes = plan.PatchTypes
	// DistributionKinds are the values of Distribution.Kind.
	DistributionKinds = plan.DistributionKinds
	// AccessPaths are the values of Plan.Access.
	AccessPaths = plan.AccessPaths
)

func init() { plan.KnownSubjects = subjectNames }

// LoadPlan reads a plan (see plan.LoadPlan): strict JSON, errors naming the
// line, field and allowed values, defaults applied.
func LoadPlan(r io.Reader) (*Plan, error) { return plan.LoadPlan(r) }

// LoadPlanFile reads the plan file at path (see plan.LoadPlanFile).
func LoadPlanFile(path string) (*Plan, error) { return plan.LoadPlanFile(path) }

// subjectNames lists the registered subjects' names.
func subjectNames() []string {
	var names []string
	for _, s := range Subjects() {
		names = append(names, s.Name)
	}
	return names
}
