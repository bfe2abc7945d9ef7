package mcpserve

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/ports"
)

// Multi round-trip requests (protocol 2026-07-28 and later): a server may
// no longer send elicitation/create to the client while it serves a call.
// A question of an upstream server during a forwarded call is answered to
// the client instead as the call's result with "resultType":
// "input_required" (the question and an opaque requestState); the upstream
// call keeps waiting; the client calls the tool again with the answer in
// inputResponses and the requestState echoed, and that call's result is
// the upstream's final result (or its next question).

// DefaultInputTimeout is how long a call waits, by default, for the
// client to come back with the answer to a question it was handed in an
// input-required result; after it the question is answered "cancel" to the
// server, the upstream call is ended and the state is forgotten.
const DefaultInputTimeout = 5 * time.Minute

// DefaultMaxPendingInputs is how many calls may wait, by default, for a
// client's answer at once; a further question is refused.
const DefaultMaxPendingInputs = 16

// ReasonInputStateUnknown is the reason word of the error result of a
// call whose requestState is not one this Server handed out, has expired
// or was used already, was handed to another session, or names another
// tool.
const ReasonInputStateUnknown = "input_state_unknown"

// inputRequestID is the id of the one input request of a round.
const inputRequestID = "elicitation"

// ToolServers is an optional interface of a Backend: ToolServer returns
// the id of the server that a call of the tool offered as name goes to
// ("" when not known). With it, a server's question during a multi
// round-trip call is routed only to a call of that server.
type ToolServers interface {
	ToolServer(name string) string
}

// errUnroutable and errInputsFull are Elicit's refusals of a question
// during multi round-trip calls; both wrap ErrNoElicitingClient.
var (
	errUnroutable = fmt.Errorf("%w: not exactly one call of the server waits", ErrNoElicitingClient)
	errInputsFull = fmt.Errorf("%w: too many calls wait for an answer", ErrNoElicitingClient)
)

// inputs are a Server's multi round-trip calls.
type inputs struct {
	timeout time.Duration
	max     int

	mu       sync.Mutex
	inflight map[*roundCall]struct{} // calls whose upstream call runs
	states   map[string]*roundCall   // requestState → the call it resumes
	asking   int                     // calls with a question (q != nil)
}

func newInputs(timeout time.Duration, max int) *inputs {
	if timeout <= 0 {
		timeout = DefaultInputTimeout
	}
	if max <= 0 {
		max = DefaultMaxPendingInputs
	}
	return &inputs{timeout: timeout, max: max, inflight: map[*roundCall]struct{}{}, states: map[string]*roundCall{}}
}

// roundCall is one downstream call that may span several round trips.
type roundCall struct {
	sess   *mcp.ServerSession
	tool   string
	server string
	round  *ports.InputRound // the round sent upstream (handon.go)
	cancel context.CancelFunc
	done   chan outcome   // the upstream call's end (1)
	asks   chan *question // a question to hand the client (1)
	over   chan struct{}  // closed when the call is ended
	// progress reports to the round running now (nil between rounds, or
	// when that round's client gave no progress token).
	progress atomic.Pointer[func(ports.Progress)]

	// under inputs.mu
	q     *question   // the question open, nil none
	state string      // its requestState once handed out
	timer *time.Timer // its expiry
	ended bool
}

type outcome struct {
	r   ports.ToolResult
	err error
}

// question is one upstream question and where its answer goes.
type question struct {
	params *mcp.ElicitParams
	answer chan ports.ElicitResult // 1
}

// multiRound reports whether the call req goes through the multi
// round-trip path: it resumes a call (carries a requestState), or its
// session is on 2026-07-28 or later and declared elicitation (an upstream
// of the legacy era may then ask through Elicit while the call runs; one
// of the modern era hands its questions on, handon.go). Another modern
// client's call is handed on without the call being parked (callHanded).
func multiRound(req *mcp.CallToolRequest) bool {
	if req.Params != nil && req.Params.RequestState != "" {
		return true
	}
	return req.Session != nil && roundsElicit(req.Session.InitializeParams())
}

// roundsElicit reports whether a client that sent ip takes questions in
// input-required results.
func roundsElicit(ip *mcp.InitializeParams) bool {
	return ip != nil && ip.Capabilities != nil && ip.Capabilities.Elicitation != nil && ip.ProtocolVersion >= mrtrVersion
}

// callRounds serves one round of a multi round-trip call of name: a new
// call starts the upstream call; a retry hands its answer to the question
// its requestState names. Either way the round ends with the upstream's
// result, or its next question as an input-required result.
func (s *Server) callRounds(ctx context.Context, name string, args json.RawMessage, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var state string
	var responses mcp.InputResponseMap
	if req.Params != nil {
		state, responses = req.Params.RequestState, req.Params.InputResponses
	}
	if state != "" && !sealed(state) {
		c, q := s.in.take(state, req.Session, name)
		if c == nil {
			return errorResult("mcpward: the call's requestState is unknown, expired or not this session's (" + ReasonInputStateUnknown + ")"), nil
		}
		c.follow(ctx)
		q.answer <- answerOf(req.Params.InputResponses[inputRequestID])
		return s.awaitRound(ctx, c)
	}
	c := &roundCall{sess: req.Session, tool: name, done: make(chan outcome, 1), asks: make(chan *question, 1), over: make(chan struct{})}
	if ts, ok := s.b.(ToolServers); ok {
		c.server = ts.ToolServer(name)
	}
	// A first request, or the retry of a round handed on (handon.go):
	// either way a new upstream request, carrying the client's answers and
	// the upstream's state.
	round, err := s.openRound(state, c.server, methodCall, name, responses)
	if err != nil {
		return nil, err
	}
	c.round = round
	ctx = ports.WithInputRound(ctx, round)
	// The upstream call outlives this round: it ends with its result, the
	// client's cancel of a round, the state's expiry or Close. Its
	// progress goes to the round running at the time, if any.
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.cancel = cancel
	if ports.ProgressFunc(ctx) != nil {
		cctx = ports.WithProgress(cctx, func(p ports.Progress) {
			if f := c.progress.Load(); f != nil {
				(*f)(p)
			}
		})
	}
	c.follow(ctx)
	s.in.mu.Lock()
	s.in.inflight[c] = struct{}{}
	s.in.mu.Unlock()
	go func() {
		r, err := s.b.CallTool(cctx, name, args)
		s.in.mu.Lock()
		delete(s.in.inflight, c)
		s.in.mu.Unlock()
		c.done <- outcome{r, err}
	}()
	return s.awaitRound(ctx, c)
}

// awaitRound waits for c's result or next question, or for ctx (the
// client's cancel of this round, which ends the call).
func (s *Server) awaitRound(ctx context.Context, c *roundCall) (*mcp.CallToolResult, error) {
	select {
	case o := <-c.done:
		s.in.end(c)
		if o.err != nil {
			return errorResult(o.err.Error()), nil
		}
		if c.round != nil && c.round.Requests != nil {
			return s.handedCall(c.sess, c.round, c.server, c.tool), nil
		}
		return toResult(o.r), nil
	case q := <-c.asks:
		c.progress.Store(nil) // this round ends
		state, err := s.in.park(c)
		if err != nil {
			s.in.end(c)
			return errorResult("mcpward: the server's question could not be handed to the client (elicitation_failed)"), nil
		}
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{inputRequestID: q.params}, RequestState: state}, nil
	case <-ctx.Done():
		s.in.end(c)
		return nil, ctx.Err()
	}
}

// follow sends c's progress to the round of ctx (its client's progress
// token), or nowhere when it gave none.
func (c *roundCall) follow(ctx context.Context) {
	if f := ports.ProgressFunc(ctx); f != nil {
		c.progress.Store(&f)
	} else {
		c.progress.Store(nil)
	}
}

// park gives c's open question an unguessable requestState that expires
// after the timeout.
func (in *inputs) park(c *roundCall) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	state := base64.RawURLEncoding.EncodeToString(b[:])
	in.mu.Lock()
	defer in.mu.Unlock()
	if c.ended || c.q == nil {
		return "", errors.New("mcpserve: the call ended")
	}
	c.state = state
	in.states[state] = c
	c.timer = time.AfterFunc(in.timeout, func() { in.expire(c, state) })
	return state, nil
}

// take returns the call state resumes and its open question, forgetting
// the state; nil when state is unknown, or was handed to another session
// or for another tool (it then stays its owner's).
func (in *inputs) take(state string, sess *mcp.ServerSession, tool string) (*roundCall, *question) {
	in.mu.Lock()
	defer in.mu.Unlock()
	c, ok := in.states[state]
	if !ok || c.sess != sess || c.tool != tool || c.ended {
		return nil, nil
	}
	delete(in.states, state)
	c.timer.Stop()
	q := c.q
	c.q, c.state, c.timer = nil, "", nil
	in.asking--
	return c, q
}

// expire ends c when its state is still open after the timeout.
func (in *inputs) expire(c *roundCall, state string) {
	in.mu.Lock()
	open := in.states[state] == c
	in.mu.Unlock()
	if open {
		in.end(c)
	}
}

// end ends c: its upstream call is cancelled, its open question answered
// "cancel", its state forgotten. It is idempotent.
func (in *inputs) end(c *roundCall) {
	in.mu.Lock()
	if c.ended {
		in.mu.Unlock()
		return
	}
	c.ended = true
	delete(in.inflight, c)
	if c.state != "" {
		delete(in.states, c.state)
		c.timer.Stop()
	}
	q := c.q
	if q != nil {
		in.asking--
	}
	c.q, c.state, c.timer = nil, "", nil
	in.mu.Unlock()
	c.cancel() // before over: a question then answered sees its call's ctx ended
	close(c.over)
	if q != nil {
		select {
		case q.answer <- ports.ElicitResult{Action: ports.ElicitCancel}:
		default:
		}
	}
}

// closeAll ends every call (Server.Close).
func (in *inputs) closeAll() {
	in.mu.Lock()
	var all []*roundCall
	for c := range in.inflight {
		all = append(all, c)
	}
	for _, c := range in.states {
		all = append(all, c)
	}
	in.mu.Unlock()
	for _, c := range all {
		in.end(c)
	}
}

// Pending returns how many calls wait for a client's answer now.
func (s *Server) Pending() int {
	s.in.mu.Lock()
	defer s.in.mu.Unlock()
	return len(s.in.states)
}

// elicitInRound puts r to sess, a client on 2026-07-28 or later, inside
// the result of the one call of r's server that runs on sess, and waits
// for the client's retry with the answer.
func (s *Server) elicitInRound(ctx context.Context, sess *mcp.ServerSession, r ports.ElicitRequest) (ports.ElicitResult, error) {
	q := &question{params: elicitParams(r), answer: make(chan ports.ElicitResult, 1)}
	s.in.mu.Lock()
	var c *roundCall
	n := 0
	for k := range s.in.inflight {
		if k.sess == sess && k.q == nil && (k.server == "" || r.ServerID == "" || k.server == r.ServerID) {
			c = k
			n++
		}
	}
	switch {
	case n != 1:
		s.in.mu.Unlock()
		return ports.ElicitResult{}, errUnroutable
	case s.in.asking >= s.in.max:
		s.in.mu.Unlock()
		return ports.ElicitResult{}, errInputsFull
	}
	c.q = q
	s.in.asking++
	s.in.mu.Unlock()
	c.asks <- q // never blocks: one question per call at a time
	select {
	case a := <-q.answer:
		return a, nil
	case <-c.over:
		return ports.ElicitResult{Action: ports.ElicitCancel}, nil
	case <-ctx.Done():
		return ports.ElicitResult{}, ctx.Err()
	}
}

// answerOf is the client's answer r as the port's; anything but an
// elicitation answer is "cancel".
func answerOf(r mcp.InputResponse) ports.ElicitResult {
	er, ok := r.(*mcp.ElicitResult)
	if !ok || er == nil {
		return ports.ElicitResult{Action: ports.ElicitCancel}
	}
	return ports.ElicitResult{Action: ports.ElicitAction(er.Action), Content: er.Content}
}
