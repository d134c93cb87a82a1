package lab

// SignalInformerSynced is the sync signal the recording wrappers record
// for each informer: its HasSynced (the store holds the initial list).
const SignalInformerSynced = "informer-synced"

// SignalHandlerSynced is the sync signal recorded for each event handler
// registration: its HasSynced (the handler has returned on every object of
// the initial list).
const SignalHandlerSynced = "handler-synced"

// OpPanic is the Op of the RecNote a recording wrapper writes when the
// user's code panics (in an event handler, a reconcile, or a goroutine
// that recovers through client-go's utilruntime.HandleCrash). Its Detail
// holds the panic value and the stack.
const OpPanic = "panic"

// OpStartError is the Op of the RecNote recorded when a controller-runtime
// manager stops with an error before its run ends.
const OpStartError = "start-error"
