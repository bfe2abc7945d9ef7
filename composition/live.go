package composition

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"

	"github.com/mcpward/mcpward/adapters/mcpsession"
	"github.com/mcpward/mcpward/core/activation"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// Fleet is the live set of servers Connect started, and those Add added
// since. It is safe for concurrent use. Close must be called to stop
// every supervisor.
//
// The Fleet follows its supervisors: when a server's catalog changes (a
// notifications/tools/list_changed refresh, a reconnect, a failed refresh
// that marks it stale) or its state does, and when a server is added or
// removed, the Fleet's generation grows by one, and Set, Current and
// Servers show the new state. A host that hands tools to its model reads
// them again on every generation (see Current). A tool taken from an
// older generation stays safe to hold: a call through it goes to the
// server's current tool when that is the same, and is refused by name
// (catalog.ReasonToolChanged, catalog.ReasonToolRemoved, Class Config)
// when the tool changed or vanished, before its arguments are validated
// against the stale schema and before anything is sent.
type Fleet struct {
	host *Host
	opts ConnectOptions // Names cleared
	conn ports.Connector
	diag *diagnostics
	logs *serverLogs // nil when the Host forwards no server log messages

	// life ends on Close; background connects run under it, and wg counts
	// them.
	life   context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	members map[string]*member
	// sups maps the name of every supervised member to its supervisor.
	sups    map[string]*supervisor.Server
	gen     uint64
	set     *catalog.Set  // of gen; nil: to be built
	changed chan struct{} // closed when gen is replaced
	busy    int           // connects running
	idle    chan struct{} // closed while busy is 0
	closed  bool

	closeOnce sync.Once
	closeErr  error
}

// member is one server name of a Fleet.
type member struct {
	// base is the result of a server without a supervisor, and Name and
	// Evaluation of one with a supervisor.
	base ServerStatus
	sv   *supervisor.Server
	// connErr is the failure of the latest Connect of sv that left it Idle
	// without a failure of its own (its ctx had ended before it started).
	connErr *refusal.Error
	// seen is what the latest generation showed of sv's status.
	seen seenStatus
	// unaudited is set when the record of the decision that allowed sv
	// could not be made durable: sv is closed, and base is the result.
	unaudited bool
}

// supervised reports whether m's status is its supervisor's: it has one,
// in service (not taken out for an unaudited decision).
func (m *member) supervised() bool { return m.sv != nil && !m.unaudited }

// seenStatus is what of a supervisor's Status makes a new generation.
type seenStatus struct {
	state supervisor.State
	err   *refusal.Error
	cat   *catalog.Catalog
}

// Generation is one state of a Fleet's tool set.
type Generation struct {
	// N counts the Fleet's changes; it grows by at least one at every
	// change and never goes back.
	N uint64
	// Set is the tool set of every server's current catalog (those of
	// connecting and failed servers included, as their supervisors retain
	// them, marked stale), with the refused and failed servers in its
	// rejected bucket.
	Set *catalog.Set
	// Changed is closed when a newer generation replaces this one. After
	// Close it is nil (never closed): a watcher stops on Closed.
	Changed <-chan struct{}
	// Closed reports that the Fleet was closed: this is its last
	// generation, and its tools refuse every call.
	Closed bool
}

// newFleet returns an empty Fleet of h with opts.
func newFleet(h *Host, opts *ConnectOptions) *Fleet {
	f := &Fleet{host: h, opts: *opts, diag: newDiagnostics(), logs: h.fleetLogs(opts.OnServerLog), members: map[string]*member{},
		sups: map[string]*supervisor.Server{}, changed: make(chan struct{}), idle: make(chan struct{})}
	f.opts.Names = nil
	close(f.idle)
	switch {
	case opts.connector != nil:
		f.conn = opts.connector
	case h.dialer != nil:
		f.conn = mcpsession.New(h.dialer.recording(f.diag), f.logs.sessionOptions(opts.sessionOptions()))
	}
	f.conn = h.tel.connector(f.conn)
	f.life, f.cancel = context.WithCancel(context.Background())
	return f
}

// add evaluates srcs (once: every decision is audited) and adds names
// (deduplicated; none: every name srcs define that the Fleet lacks) as
// members, then connects the supervised ones: in the background under
// f.life, or before it returns, under ctx. It returns the names added,
// sorted; none once the Fleet is closed. A name that is already a member
// is skipped.
func (f *Fleet) add(ctx context.Context, srcs []definition.Source, names []string, background bool) []string {
	h := f.host
	// The neutral directories the evaluation made to admit stdio launches
	// are removed while the servers connect, and gone before add returns.
	admitted := &admissionDirs{}
	ev, res := h.evaluate(withAdmissionDirs(ctx, admitted), srcs)
	var removed func()
	defer func() {
		if removed == nil {
			removed = admitted.removeAll()
		}
		removed()
	}()
	if len(names) == 0 {
		for _, r := range ev.Servers {
			names = append(names, r.Name)
		}
	} else {
		names = slices.Clone(names)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	f.mu.Lock()
	names = slices.DeleteFunc(names, func(n string) bool { return f.members[n] != nil })
	f.mu.Unlock()
	var added []*member
	for _, name := range names {
		r, ok := ev.Server(name)
		m := &member{base: ServerStatus{Name: name, State: r.State, Class: refusal.None, Reason: r.Reason, Evaluation: r}}
		added = append(added, m)
		switch {
		case !ok:
			m.base.State, m.base.Reason = StateUnknown, ReasonUnknownServer
			continue
		case !r.Usable():
			continue
		}
		t, mat, ok := h.connectTarget(res, name, r.Fingerprint)
		if !ok || f.conn == nil {
			m.base.State, m.base.Class, m.base.Reason = StateFailed, refusal.Config, ReasonNotConnectable
			continue
		}
		f.diag.add(name, mat, r.Projection)
		var def *definition.Definition
		if s, found := res.Server(name); found {
			def = s.Def
		}
		sopts := h.supervisorOptions(&f.opts, name, def, res.DeniedTools)
		user := sopts.OnChange
		sopts.OnChange = func(st supervisor.Status) {
			f.observe(m, st)
			if user != nil {
				user(st)
			}
		}
		m.sv = supervisor.New(f.logs.wrap(f.conn, name, mat), t, sopts)
	}

	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		for _, m := range added {
			if m.sv != nil {
				_ = m.sv.CloseWith(fleetClosed(""))
			}
		}
		return nil
	}
	var out []string
	var connect []*member
	for _, m := range added {
		if f.members[m.base.Name] != nil {
			continue // added meanwhile by a concurrent Add
		}
		f.members[m.base.Name] = m
		out = append(out, m.base.Name)
		if m.sv != nil {
			f.sups[m.base.Name] = m.sv
			connect = append(connect, m)
		}
	}
	f.startLocked(len(connect))
	f.wg.Add(len(connect)) // under f.mu with the closed check: never after Close's Wait began
	f.bumpLocked()
	f.mu.Unlock()
	for _, m := range added {
		if m.sv != nil && !slices.Contains(connect, m) {
			_ = m.sv.Close()
		}
	}

	parallel := f.opts.Parallel
	if parallel <= 0 {
		parallel = DefaultConnectParallel
	}
	sem := make(chan struct{}, parallel)
	evalCtx := ctx
	if background {
		ctx = f.life
	}
	// Each server's first launch takes the directory its evaluation
	// admitted it in (Dialer.Dial, workdir.go); the others are removed
	// while the servers connect.
	dirs := make([]*launchDir, len(connect))
	for i, m := range connect {
		dirs[i] = &launchDir{server: m.base.Name, dir: admitted.take(m.base.Name)}
	}
	removed = admitted.removeAll()
	run := func(i int, m *member) {
		defer f.wg.Done()
		defer f.done()
		defer dirs[i].release()
		ctx := withLaunchDir(ctx, dirs[i])
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
		case <-ctx.Done():
		}
		f.connect(ctx, m) // returns the ctx refusal at once when ctx ended
	}
	// The decisions' records are made durable while the servers connect
	// (one write of the audit log, not one fsync per server on the connect
	// path), and before add returns: a Fleet is handed out only on
	// recorded decisions.
	flush := func() {
		if err := h.decider.Flush(evalCtx); err != nil {
			f.unaudited(added, ev.unaudited(err), err)
		}
	}
	if !background && len(connect) == 1 {
		// A lone server waited for connects in the calling goroutine, whose
		// stack has room already (a new goroutine's grows, copied, while the
		// handshake goes down the SDK's call chain); the flush runs beside
		// it, as below.
		flushed := make(chan struct{})
		go func() {
			defer close(flushed)
			flush()
		}()
		run(0, connect[0])
		<-flushed
		return out
	}
	var wg sync.WaitGroup
	for i, m := range connect {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(i, m)
		}()
	}
	flush()
	if !background {
		wg.Wait()
	}
	return out
}

// unaudited takes the members of added named in names (their decisions'
// records could not be made durable) out of service: each becomes
// StateDenied with activation.ReasonAuditUnavailable, and its supervisor,
// which may be connecting, is closed with that refusal.
func (f *Fleet) unaudited(added []*member, names []string, err error) {
	var re *refusal.Error
	if !errors.As(err, &re) {
		re = refusal.New(refusal.Transient, activation.ReasonAuditUnavailable, "")
	}
	var closing []*supervisor.Server
	f.mu.Lock()
	for _, m := range added {
		if !slices.Contains(names, m.base.Name) {
			continue
		}
		m.base.Evaluation.unaudited(err)
		m.base.State, m.base.Class, m.base.Reason = StateDenied, refusal.None, activation.ReasonAuditUnavailable
		if m.sv != nil && f.members[m.base.Name] == m {
			m.unaudited = true
			delete(f.sups, m.base.Name)
			closing = append(closing, m.sv)
		}
	}
	f.bumpLocked()
	f.mu.Unlock()
	for _, sv := range closing {
		_ = sv.CloseWith(re)
	}
}

// connect runs one Connect of m's supervisor under ctx and records a
// failure that left it Idle without one of its own.
func (f *Fleet) connect(ctx context.Context, m *member) error {
	f.mu.Lock()
	m.connErr = nil
	f.mu.Unlock()
	err := m.sv.Connect(ctx)
	if err != nil {
		var e *refusal.Error
		if !errors.As(err, &e) {
			e = refusal.New(refusal.Internal, supervisor.ReasonUnclassified, m.base.Name)
		}
		f.mu.Lock()
		m.connErr = e
		f.bumpLocked()
		f.mu.Unlock()
	}
	return err
}

// startLocked counts n connects as running. f.mu is held.
func (f *Fleet) startLocked(n int) {
	if n <= 0 {
		return
	}
	if f.busy == 0 {
		f.idle = make(chan struct{})
	}
	f.busy += n
}

// done counts one connect as ended.
func (f *Fleet) done() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy--; f.busy == 0 {
		close(f.idle)
	}
}

// bumpLocked starts a new generation. f.mu is held.
func (f *Fleet) bumpLocked() {
	f.gen++
	f.set = nil
	if f.changed != nil {
		close(f.changed)
		f.changed = make(chan struct{})
	}
}

// observe is the OnChange of m's supervisor: a change of its state,
// failure or catalog starts a new generation.
func (f *Fleet) observe(m *member, st supervisor.Status) {
	s := seenStatus{state: st.State, err: st.Err, cat: st.Catalog}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.members[m.base.Name] != m || m.seen == s {
		return
	}
	m.seen = s
	f.bumpLocked()
}

// resultLocked returns m's ServerStatus now. f.mu is held.
func (f *Fleet) resultLocked(m *member) ServerStatus {
	r := m.base
	if m.supervised() {
		st := m.sv.Status()
		var err *refusal.Error
		r.State, err = m.stateOf(st)
		r.Class, r.Reason = refusal.None, ""
		if err != nil {
			r.Class, r.Reason = err.Class, err.Reason
		}
		if r.State == StateFailed {
			r.Detail = f.diag.detail(r.Name)
		}
		if st.Catalog != nil {
			fill(&r, st.Catalog)
		}
	}
	if r.State == StateRefused || r.State == StateFailed {
		rej := catalog.Rejected{Server: r.Name, Kind: catalog.KindServer, Name: r.Name, Reason: r.Reason}
		r.Rejected = append([]catalog.Rejected{rej}, r.Rejected...)
	}
	return r
}

// stateOf maps st, a status of m's supervisor, to m's State and failure
// (nil: none). m.connErr must not change meanwhile (f.mu is held).
func (m *member) stateOf(st supervisor.Status) (State, *refusal.Error) {
	switch st.State {
	case supervisor.Ready:
		return StateConnected, st.Err
	case supervisor.Failed:
		return StateFailed, st.Err
	case supervisor.Closed:
		return StateClosed, nil
	case supervisor.Idle:
		err := st.Err
		if err == nil {
			err = m.connErr
		}
		if err != nil {
			return StateFailed, err
		}
	}
	return StateConnecting, st.Err
}

// namesLocked returns the members' names, sorted. f.mu is held.
func (f *Fleet) namesLocked() []string {
	names := make([]string, 0, len(f.members))
	for n := range f.members {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// setLocked returns the Set of the current generation, building it when
// needed. f.mu is held.
func (f *Fleet) setLocked() *catalog.Set {
	if f.set != nil {
		return f.set
	}
	var cats []*catalog.Catalog
	var rejected []catalog.Rejected
	for _, n := range f.namesLocked() {
		m := f.members[n]
		state, reason := m.base.State, m.base.Reason
		if m.supervised() {
			st := m.sv.Status()
			if st.Catalog != nil {
				cats = append(cats, st.Catalog)
			}
			var err *refusal.Error
			state, err = m.stateOf(st)
			reason = ""
			if err != nil {
				reason = err.Reason
			}
		}
		if state == StateRefused || state == StateFailed {
			rejected = append(rejected, catalog.Rejected{Server: n, Kind: catalog.KindServer, Name: n, Reason: reason})
		}
	}
	f.set = catalog.NewSet(cats, rejected)
	return f.set
}

// Current returns the Fleet's current generation: its number, its tool
// set and a channel closed when a newer one replaces it. A host keeps its
// model's tools current with
//
//	for {
//		g := fleet.Current()
//		if g.Closed {
//			return
//		}
//		offer(g.Set.ModelTools())
//		select {
//		case <-g.Changed:
//		case <-ctx.Done():
//			return
//		}
//	}
//
// Several changes in a row may make one generation step of more than one
// (a watcher sees the latest, not each). Current never blocks on a
// server.
func (f *Fleet) Current() Generation {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := Generation{N: f.gen, Set: f.setLocked(), Closed: f.closed}
	if !f.closed {
		g.Changed = f.changed
	}
	return g
}

// Servers returns one ServerStatus per server name of the Fleet (those
// Connect considered and those Add added, less those Remove removed),
// sorted by name, as they are now: each call reads the supervisors
// afresh.
func (f *Fleet) Servers() []ServerStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := f.namesLocked()
	out := make([]ServerStatus, 0, len(names))
	for _, n := range names {
		out = append(out, f.resultLocked(f.members[n]))
	}
	return out
}

// Set returns the tool set of the current generation (see Current), with
// the refused and failed servers in its rejected bucket.
func (f *Fleet) Set() *catalog.Set { return f.Current().Set }

// Wait waits until no connect the Fleet started (Connect's and Add's,
// in the background or not, and Reconnect's) is running, or ctx ends
// (Class Transient, Reason "cancelled" or "timeout"). It does not wait for
// the supervisors' own reconnects after a lost session: watch Current
// for those.
func (f *Fleet) Wait(ctx context.Context) error {
	f.mu.Lock()
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		reason := supervisor.ReasonCancelled
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = supervisor.ReasonTimeout
		}
		return refusal.New(refusal.Transient, reason, "")
	}
}

// Reconnect connects server name again and returns when that ends, like
// Connect for one server: nil once it is Ready, else the failure (Class
// and Reason as in its ServerStatus). From StateFailed (whatever the
// class) it starts a new sequence of attempts with fresh counts, so
// Failed is never final; a Ready server is left alone (nil at once), and
// one already connecting is joined. If ctx ends first it returns Class
// Transient "cancelled" or "timeout": a sequence it started is abandoned
// (the server is then StateFailed with that reason, unless it already
// had a failure of its own, which stays), one it joined goes on. The
// server's definition is the one it was added with: to
// connect a changed definition, Remove it and Add it again. It refuses a
// name the Fleet does not have (Class Config, ReasonUnknownServer) and one
// without a supervisor, that was not usable or not connectable (Class
// Config, ReasonNotConnectable); after Close, Class Config,
// ReasonFleetClosed.
func (f *Fleet) Reconnect(ctx context.Context, name string) error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return fleetClosed(name)
	}
	m := f.members[name]
	switch {
	case m == nil:
		f.mu.Unlock()
		return refusal.New(refusal.Config, ReasonUnknownServer, name)
	case !m.supervised():
		f.mu.Unlock()
		return &refusal.Error{Class: refusal.Config, Reason: ReasonNotConnectable, Server: name,
			Detail: "the Fleet has no supervisor for this server (" + string(m.base.State) + ")"}
	}
	f.startLocked(1)
	f.wg.Add(1)
	f.mu.Unlock()
	defer f.wg.Done()
	defer f.done()
	return f.connect(ctx, m)
}

// Add evaluates srcs and adds the servers named, connected as Connect
// connects them (blocking, or in the background when the ConnectOptions
// given to Connect set Background; with those options' OnStatus,
// Parallel, Supervisor and Session), and returns their ServerResults,
// sorted by name. No names means every name srcs define that the Fleet
// does not have. A name srcs do not define is added as StateUnknown, like
// Connect's. It refuses, adding nothing, a name the Fleet already has
// (Class Config, ReasonServerExists: Remove it first); after Close, Class
// Config, ReasonFleetClosed. Every Add starts a new generation.
func (f *Fleet) Add(ctx context.Context, srcs []definition.Source, names ...string) ([]ServerStatus, error) {
	f.mu.Lock()
	closed := f.closed
	var exists string
	for _, n := range names {
		if f.members[n] != nil {
			exists = n
			break
		}
	}
	f.mu.Unlock()
	switch {
	case closed:
		return nil, fleetClosed("")
	case exists != "":
		return nil, refusal.New(refusal.Config, ReasonServerExists, exists)
	}
	added := f.add(ctx, srcs, names, f.opts.Background)
	if added == nil && f.isClosed() {
		return nil, fleetClosed("")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]ServerStatus, 0, len(added))
	for _, n := range added {
		if m := f.members[n]; m != nil {
			out = append(out, f.resultLocked(m))
		}
	}
	return out, nil
}

// Remove removes server name from the Fleet: it is gone from Servers and
// the Set at once (a new generation), its supervisor is closed (its
// session and child process ended, a connect of it ended) before Remove
// returns, and the tools, prompts and resources of its catalogs refuse
// every call with Class Config, ReasonServerRemoved, naming the server
// (they belong to that supervisor, even if the name is added again). It
// returns the supervisor's close failure, if any. It refuses a name the
// Fleet does not have (Class Config, ReasonUnknownServer); after Close,
// Class Config, ReasonFleetClosed.
func (f *Fleet) Remove(name string) error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return fleetClosed(name)
	}
	m := f.members[name]
	if m == nil {
		f.mu.Unlock()
		return refusal.New(refusal.Config, ReasonUnknownServer, name)
	}
	delete(f.members, name)
	delete(f.sups, name)
	f.bumpLocked()
	f.mu.Unlock()
	if m.sv != nil {
		return m.sv.CloseWith(&refusal.Error{Class: refusal.Config, Reason: ReasonServerRemoved,
			Detail: "the server was removed from the Fleet"})
	}
	return nil
}

// fleetClosed is the refusal of every use of a closed Fleet (and, with the
// server id, of its servers' tools, prompts and resources).
func fleetClosed(server string) *refusal.Error {
	return &refusal.Error{Class: refusal.Config, Reason: ReasonFleetClosed, Server: server, Detail: "the Fleet was closed"}
}

// isClosed reports whether Close was called.
func (f *Fleet) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// CallServerTool calls the tool whose name on the server named server is
// tool (for the host-facing name a model saw, see CallHostTool), through
// the server's current catalog: the arguments are validated against the
// narrowed schema before anything is sent (an *catalog.ArgumentError,
// Class Config, Reason "invalid_arguments"). It refuses with a
// *refusal.Error naming the server: a server the Fleet does not have
// (Class Config, ReasonUnknownServer), a server that is not connected now
// (ReasonServerUnavailable: failed, connecting, or not usable; its Detail
// says the state and reason word), a tool the catalog does not hold (Class
// Config, ReasonUnknownTool), and after Close (Class Config,
// ReasonFleetClosed). Other errors are those of catalog.Tool.Call, which
// calls through the server's supervisor: the call is bounded by its
// CallTimeout and CallTimeoutMax (see ConnectOptions.Supervisor) and
// fails with Class Transient, supervisor.ReasonCallTimeout when it
// outlives them. A host that wants the call's progress passes a ctx from
// WithProgress: only such a call sends the server a progress token, gets
// its progress and has its CallTimeout window restarted by it; without
// one, CallTimeout bounds the whole call (a long job that reports
// progress is cut off all the same).
func (f *Fleet) CallServerTool(ctx context.Context, server, tool string, args json.RawMessage) (ports.ToolResult, error) {
	cat, err := f.ServerCatalog(server)
	if err != nil {
		return ports.ToolResult{}, err
	}
	// Host-facing names are a pure function of (server, tool): one map
	// lookup, however large the catalog.
	if t, ok := cat.Tool(catalog.ToolName(cat.Server, tool)); ok && t.NameOnServer() == tool {
		return t.Call(ctx, args)
	}
	return ports.ToolResult{}, &refusal.Error{Class: refusal.Config, Reason: ReasonUnknownTool, Server: server,
		Detail: "the server's catalog has no tool of that name"}
}

// CallHostTool calls the tool of the current Set whose host-facing name is
// hostName (the name the model saw: ToolName of the server and its tool),
// as CallServerTool calls a (server, tool) pair: the same validation,
// bounds and errors. A name the current Set does not hold is refused by
// what became of its server (catalog.IsToolNameOf tells which server a
// name belongs to, without its catalog): ReasonServerUnavailable naming
// the server when that server is not connected now (so the host can tell
// the model the server is down); Class Config, ReasonUnknownTool naming
// the server when it is connected and lacks the tool (gone, or rejected as
// a name collision across servers); ReasonUnknownTool without a server
// when no server of the Fleet, or more than one, can own the name.
func (f *Fleet) CallHostTool(ctx context.Context, hostName string, args json.RawMessage) (ports.ToolResult, error) {
	g := f.Current()
	if t, ok := g.Set.Tool(hostName); ok {
		return t.Call(ctx, args)
	}
	if g.Closed {
		return ports.ToolResult{}, fleetClosed("")
	}
	return ports.ToolResult{}, f.missingTool(hostName)
}

// missingTool returns the refusal of a host-facing name the current Set
// lacks (see CallHostTool).
func (f *Fleet) missingTool(hostName string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var owner *member
	for name, m := range f.members {
		if !catalog.IsToolNameOf(hostName, name) {
			continue
		}
		if owner != nil { // two servers can own it: say neither
			owner = nil
			break
		}
		owner = m
	}
	switch {
	case f.closed:
		return fleetClosed("")
	case owner == nil:
		return &refusal.Error{Class: refusal.Config, Reason: ReasonUnknownTool,
			Detail: "the Fleet's tool set has no tool of that host-facing name"}
	case owner.sv != nil && owner.sv.Status().State == supervisor.Ready:
		return &refusal.Error{Class: refusal.Config, Reason: ReasonUnknownTool, Server: owner.base.Name,
			Detail: "the server has no tool of that host-facing name"}
	}
	return f.unavailableLocked(owner)
}

// unavailableLocked returns the refusal of a call to m, which is not
// connected: ReasonServerUnavailable naming it, of the class a caller
// branches on (Transient while it connects, its failure's once it failed,
// Refused for a server denied or refused, Config for one that did not
// resolve), its Detail the server's state and reason word. f.mu is held.
func (f *Fleet) unavailableLocked(m *member) *refusal.Error {
	state, class, reason := m.base.State, refusal.Config, m.base.Reason
	if m.supervised() {
		var err *refusal.Error
		state, err = m.stateOf(m.sv.Status())
		class, reason = refusal.Transient, ""
		if err != nil {
			reason = err.Reason
			if state == StateFailed {
				class = err.Class
			}
		}
	} else {
		switch state {
		case StateDenied, StateRefused:
			class = refusal.Refused
		case StateFailed:
			class = m.base.Class
		}
	}
	detail := "the server is " + string(state)
	if reason != "" {
		detail += " (" + reason + ")"
	}
	return &refusal.Error{Class: class, Reason: ReasonServerUnavailable, Server: m.base.Name, Detail: detail}
}

// Call is CallServerTool.
//
// Deprecated: use CallServerTool, whose name says it takes the tool's name
// on the server.
func (f *Fleet) Call(ctx context.Context, server, tool string, args json.RawMessage) (ports.ToolResult, error) {
	return f.CallServerTool(ctx, server, tool, args)
}

// CallTool is CallHostTool.
//
// Deprecated: use CallHostTool, whose name says it takes the host-facing
// name.
func (f *Fleet) CallTool(ctx context.Context, hostName string, args json.RawMessage) (ports.ToolResult, error) {
	return f.CallHostTool(ctx, hostName, args)
}

// Close closes every supervisor, waiting until each has stopped (no
// session, child process or goroutine is left, background connects
// included), logs the count of server log messages dropped since the
// last one logged (MsgServerLogDropped), and returns the first close
// failure. Its generation is the
// Fleet's last (Generation.Closed); Servers then shows every supervised
// server StateClosed, and OnStatus hears each one's Closed status without
// a failure (a failure reported before is not reported again). Add,
// Remove and Reconnect refuse after it, and so does every tool, prompt
// and resource of the Fleet, old generations' included: Class Config,
// ReasonFleetClosed, naming the server (never Class Internal: the host
// closed it). It is idempotent.
func (f *Fleet) Close() error {
	f.closeOnce.Do(func() {
		f.mu.Lock()
		f.closed = true
		f.gen++
		f.set = nil
		close(f.changed)
		f.changed = nil
		sups := make([]*supervisor.Server, 0, len(f.sups))
		for _, sv := range f.sups {
			sups = append(sups, sv)
		}
		f.mu.Unlock()
		f.cancel()
		var wg sync.WaitGroup
		errs := make([]error, 0, len(sups))
		var mu sync.Mutex
		why := fleetClosed("")
		for _, sv := range sups {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := sv.CloseWith(why); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		f.wg.Wait()
		f.logs.close()
		if len(errs) > 0 {
			f.closeErr = errs[0]
		}
	})
	return f.closeErr
}
