// Package supervisor runs one supervised MCP connection per server: a
// connection state machine with its own failure classification, bounded
// exponential backoff with jitter, the server's retained catalog bound to the
// identity of the session it came from, coalesced list_changed refreshes,
// and a shutdown that leaves nothing running.
//
// A composition root makes one Server per admitted definition with New and
// drives it with Connect, Call, Refresh and Close. A Server is the
// catalog.Caller of its own catalog, so the host-facing tools of a catalog
// always call through the server's current session.
//
// # States
//
//	Idle        not connected and nothing is trying to connect: the state
//	            after New, and after a Connect whose ctx ended.
//	Connecting  an attempt is running: Connector.Connect, then the first
//	            discovery of the new session, then catalog.Build.
//	Ready       a session is up and its catalog is installed.
//	Backoff     sleeping (on Options.Clock) before the next attempt.
//	Failed      a failure that needs a caller: a non-Transient failure, the
//	            MaxAttempts-th failed attempt of one connect sequence, or the
//	            MaxAttempts-th consecutive disconnect. Only Connect leaves it;
//	            nothing retries on its own.
//	Closed      Close was called. Final.
//
// # Failure classification
//
// Every failure is a *refusal.Error and its Class decides what happens:
//
//   - Only Class Transient is retried, after a backoff sleep. Every other
//     class ends the connect sequence at once in Failed, with that error.
//   - An error from the Connector (or a session) that is not a
//     *refusal.Error is a defect of that port: it becomes Class Internal,
//     Reason "unclassified_error", and is never retried. Its text is never
//     copied (it may hold URLs or command lines).
//   - An attempt that outlives Options.ConnectTimeout (default 30 s) fails
//     with Class Transient, Reason "connect_timeout", and is retried under
//     the backoff like any Transient failure (unless the connector
//     returned a *refusal.Error of another class, which is kept). A stdio
//     server whose handshake outlives it — the process runs but never
//     answers initialize — fails with Class Protocol, the same Reason, and
//     is not retried: the same program started again would be as silent.
//   - A call that outlives its call timeouts fails with Class Transient,
//     Reason "call_timeout", and is never replayed (see Calls).
//   - A panic recovered at the server's boundary is Class Internal, Reason
//     "panic" (see Panics).
//   - The end of a caller's ctx is not a failure of the server: Connect (and
//     Refresh and Call) return Class Transient, Reason "cancelled"
//     (context.Canceled) or "timeout" (context.DeadlineExceeded).
//   - Use after Close returns Class Internal, Reason "closed"; after
//     CloseWith, the refusal its owner gave.
//
// # Backoff
//
// The n-th consecutive failure (n counts the consecutive disconnects plus
// the failed attempts of the running sequence, from 1) is followed by a
// sleep of "equal jitter" backoff:
//
//	c = min(MaxDelay, BaseDelay * 2^(n-1))
//	d = c/2 + Jitter()*c/2
//
// so a sleep is never shorter than half the capped delay (equal jitter, not
// full jitter: a server that refuses at once can never be hammered in a
// tight loop), and never longer than the cap. Sleeps use Options.Clock.
//
// # Connect sequences and disconnects
//
// Connect (from Idle or Failed) starts a sequence of at most MaxAttempts
// attempts and resets the disconnect count. When the session of a Ready
// server ends on its own (its Done channel closes and neither Close nor an
// abandoned stdio call closed it), the disconnect count grows by one, unless
// the session had been up for at least StableAfter, in which case the count
// restarts at one. At MaxAttempts consecutive disconnects the server is
// Failed with Class Transient, Reason "disconnected"; below it, a background
// sequence (again at most MaxAttempts attempts) reconnects after a backoff
// sleep. The supervisor therefore never loops: at most MaxAttempts
// sequences of at most MaxAttempts attempts run before a caller must act.
//
// # Catalog
//
// The first discovery of a session runs under the attempt's ConnectTimeout.
// If it fails while the session is still alive and the attempt's time is
// not up, the session is kept (Ready) rather than thrown away, because a
// working session with an honest partial catalog is more useful than a
// retry loop: the retained catalog of the same identity is kept, marked
// stale, and when there is none the partial lists are built into a catalog
// whose Partial marks say what is missing (Complete reports false). Status.Err
// then holds the discovery failure. If the session died during discovery,
// or the attempt's time ran out, the attempt failed like any other.
//
// A retained catalog is bound to (ServerID, ProtocolVersion, ServerVersion)
// of its session. When a new session's identity differs in any of the three,
// the retained catalog is dropped as soon as the session is open, before
// discovery, so it is never served beside the new session, not even as
// stale. When the identity matches, it may be kept (stale) as said above.
// While reconnecting, and in Failed, the retained catalog stays available,
// marked stale; Close drops it.
//
// A list_changed signal schedules a refresh in the background under the
// server's lifetime: signals are coalesced, so however many arrive, at most
// one refresh runs and one more is pending. Refresh runs one at once.
// Refreshes never overlap. A failed refresh keeps the previous catalog,
// marked stale, and sets Status.Err; the next successful refresh replaces
// the catalog and clears both. A failed list_changed refresh is not
// retried on its own.
//
// The catalog of a modern session (protocol 2026-07-28 and later) carries
// the server's caching hints (catalog.Catalog.Cache). When a list's TTL is
// positive, the supervisor lists again, in the background like a
// list_changed refresh, once the shortest TTL has passed — but never later
// than Options.CacheTTLMax (the host's own bound, 1 h by default, whatever
// ttlMs the server sent) and never sooner than Options.CacheTTLMin (10 s:
// a TTL of a millisecond is not a poll loop); each refresh, successful or
// not, schedules the next. A TTL of 0 (stale at once, and what a server
// that gives no hint means) schedules nothing, as in the legacy era: the
// lists are listed again on list_changed (which a modern server sends on
// its subscriptions/listen stream) and Refresh. A failed timed refresh
// keeps the catalog, stale, exactly like a failed list_changed one.
//
// A host may hold tools of an older catalog: a Server is their
// catalog.CatalogSource, so a call through one is checked against the
// current catalog when it starts. An unchanged tool is called; one that
// changed is refused with catalog.ReasonToolChanged and one that vanished
// with catalog.ReasonToolRemoved (Class Config), before the arguments are
// validated and before anything is sent.
//
// # Calls
//
// Call passes one call to the current session and never replays it, even
// when it fails or the session is lost meanwhile. If the caller's ctx ended
// before the call returned and the target is stdio, the session is closed
// before Call returns, because the SDK cannot cancel an in-flight stdio
// request cleanly (the adapter ends the child): the server then reconnects
// at once, without a backoff sleep, and that close does not count as a
// disconnect. Over HTTP the session stays up.
//
// Every call is bounded in time, whichever path reaches Call (a host's
// ports.Tool from the catalog, or a direct Call):
//
//	CallTimeout     default 10 min; the longest a call may go without a
//	                progress notification from the server for that call.
//	                When the caller asked for progress, each notification
//	                restarts the window, so a long job that keeps
//	                reporting progress is not cut off; otherwise it bounds
//	                the whole call.
//	CallTimeoutMax  default 1 h; the longest a call may last in all,
//	                progress or not.
//
// A call that outlives either is abandoned exactly like a call whose ctx
// ended (over stdio the session and its child are closed first, and the
// server reconnects at once) and fails with Class Transient, Reason
// "call_timeout"; it is never replayed. The end of the caller's own ctx
// stays "cancelled" or "timeout". NoTimeout turns either bound off.
//
// A call asks the server for progress (carries a progress token in its
// _meta) only when its caller asked for progress: a
// ports.CallRequest.OnProgress, or a callback put into the call's ctx with
// ports.WithProgress (how a host asks through a ports.Tool, Fleet.CallServerTool or
// Fleet.CallHostTool). Then the server's progress notifications (coalesced,
// the latest wins) reach that callback (see Call) and extend the call as
// above. Without it no token is sent, which the server has to decode and
// the call pays for in time and allocations, and CallTimeout bounds the
// whole call however long the job runs: a host that expects long jobs
// asks for progress, even with a callback that does nothing. These
// timeouts, like ConnectTimeout, run on the system clock, not on
// Options.Clock.
//
// # Prompts, resources and subscriptions
//
// A Server is also the catalog.ContentCaller of its catalog: GetPrompt,
// ReadResource, Complete, Subscribe and Unsubscribe run on the current
// session like Call: nothing is sent unless Ready, never replayed,
// abandoned over stdio like a call, bounded by the shorter of CallTimeout
// and CallTimeoutMax (they ask for no progress) with Class Transient
// "call_timeout" past it, and a panic fails the server. A list_changed of prompts or resources refreshes the catalog like one of
// tools. Subscriptions are bounded (Options.MaxSubscriptions, beyond:
// Class Refused "too_many_subscriptions") and repeated on every new
// session. A resource update of a subscribed URI reaches
// Options.OnResourceUpdated from a goroutine of the server: coalesced per
// URI and delivered in batches at most once per Options.UpdateInterval, so
// a server flooding updates costs the host at most one callback per
// subscribed URI per interval, and never a turn of a conversation.
//
// # Panics
//
// Every byte a server sends can be crafted, so a panic in the code that
// handles one server must not end the host. Like net/http for one
// connection, the supervisor recovers a panic at its boundary, in the
// goroutine that runs the server's operation: Connector.Connect, the
// discovery and catalog building of an attempt or of a refresh (a
// list_changed one or Refresh), and the session's Call. The panic becomes
// that server's failure, Class Internal, Reason "panic" (ReasonPanic):
//
//   - during an attempt, the attempt's session (if any, and so its stdio
//     child) is closed and the server is Failed, not retried (Internal is
//     not Transient);
//   - during a refresh or a call, the session may have been left in any
//     state, so it is never used again: the server is Failed with that
//     error, its retained catalog kept and marked stale, and the session
//     (and its child) closed, which ends the session's other calls in
//     flight. The caller of Call or Refresh gets the error. A later Connect
//     starts afresh.
//
// Options.Logger gets one Error record per recovered panic, with the
// server id, the reason, where it happened, the panic value's type and
// the stack; never the value's text, which can carry the server's bytes.
//
// A panic in a goroutine the supervisor does not run cannot be recovered
// by anyone but that goroutine: the SDK's own goroutines (reading and
// decoding the connection, delivering notifications) and any goroutine a
// port or the catalog starts for its own work. The code on those paths
// that handles server bytes is fuzzed instead, and must not panic.
package supervisor
