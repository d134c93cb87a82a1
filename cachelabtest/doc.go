// Package cachelabtest puts your Kubernetes controller under the lab, from
// your own go test, as net/http/httptest puts a handler under a test
// server: a fake API server in a synctest bubble (virtual time), faults
// (held and expired watches, crashes and restarts, failed and timed-out
// writes, latency, another writer), every run judged by the lab's
// invariants, and on failure the HTML report and the one command that
// replays the plan.
//
//	func TestWidgets(t *testing.T) {
//		cachelabtest.Test(t, cachelabtest.Controller{
//			CRDs: cachelabtest.CRDs("config/crd/bases"),
//			Start: func(ctx context.Context, env *cachelabtest.Env) error {
//				c := controller.NewController(env.Kube, widgets(env.RESTConfig), env.Informers)
//				if err := env.Record(c); err != nil {
//					return err
//				}
//				env.Informers.Start(ctx.Done())
//				go c.Run(ctx, 2)
//				return nil
//			},
//		}, cachelabtest.Random(cachelabtest.Primary("widgets"), cachelabtest.Examples("config/samples")))
//	}
//
// CRDs reads the controller's CustomResourceDefinitions as envtest does;
// Random(Primary(...)) draws plans over its own kind from the CRD's schema
// (create, change, scale, delete, recreate, and delete or compete for the
// children it makes, whatever their kinds), in faults; Env.Record records
// a controller's private workqueue and informers without wrappers, and
// Env.Client gives a helper actor clients of its own name.
//
// A Controller is a client-go controller (Start, from an Env whose
// informer factories record themselves) or controller-runtime reconcilers
// (Setup, on a manager the lab makes); Desired is the state it wants,
// read from a typed State. Plans are Random (rapid: -rapid.checks,
// -rapid.seed, failfiles, shrinking), Scenarios, Files or These. Test
// fails t; Catch returns the failures, for tests of planted bugs. The
// examples/ module of the repository holds two complete examples.
//
// Controller.Webhooks serves the controller's admission webhooks
// (controller-runtime's defaulters and validators, or plain handlers) on
// every matching write, through kube-apiserver's own webhook admission
// code. Register makes a Controller, with its own Random plans, a subject
// of a cachelab binary of your own, judged as Test judges it.
//
// Hunt runs Sieve's targeted campaign (stale, unobserved and intermediate
// state, aimed by a fault-free reference run) on a controller.
//
// What the cachelab command does between parsing its flags and printing
// (jobs, batches, shards, merges, replays) is not here: it lives in the
// module's internal orchestration package, used by package cli, with
// which a user builds their own cachelab binary.
package cachelabtest
