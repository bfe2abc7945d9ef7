package mcpserve

import (
	"context"
	"encoding/json"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/ports"
)

// Rounds handed on (protocol 2026-07-28 and later, both transports). When
// an upstream server of the modern era answers a request a modern client
// sent through serve (tools/call, prompts/get) with input_required, serve
// does not answer the questions itself: it hands them to that client as
// its own input_required result, under the upstream's keys, and the
// client's retry goes to the same upstream with the client's answers and
// the upstream's request state echoed unchanged (ports.InputRound).
// Between rounds serve holds nothing: its requestState is the upstream's,
// sealed (seal.go) with the server, method, name and an expiry
// (Options.InputTimeout), so a stateless HTTP request is answerable
// alone. A state that does not open, has expired, or was sealed for
// another server, method or name is refused with a JSON-RPC error
// (invalid params) naming the reason, and nothing is sent upstream.
//
// What is handed on follows what the client declared: an elicitation
// (form, or url when declared) only to a client that declared
// elicitation, a roots request only to one that declared roots (roots
// are deprecated in 2026-07-28 but the client's own to give: serve never
// answers them itself). A question the client cannot take ends the
// request with an error result naming input_unavailable. Sampling is
// refused by the session (sampling_refused), as it always is. Each round
// is one request of the client: the rounds are bounded by the client
// and by the upstream, and every round's questions and state by the
// session's bounds (mcpsession.MaxInputRequests, MaxRequestState).

// ReasonInputUnavailable is the reason word of the error result of a
// request whose upstream asked a question the client did not declare it
// can take.
const ReasonInputUnavailable = "input_unavailable"

// Methods bound in a sealed state.
const (
	methodCall   = "tools/call"
	methodPrompt = "prompts/get"
)

// maxInputResponses bounds the answers of a retry that are forwarded (the
// bound on one round's questions); a retry with more is refused.
const maxInputResponses = 16

// PromptServers is an optional interface of a Backend: PromptServer
// returns the id of the server that a prompts/get of the prompt offered
// as name goes to ("" when not known). With it a sealed requestState of a
// prompt is bound to that server.
type PromptServers interface {
	PromptServer(name string) string
}

// modernClient reports whether sess's client speaks 2026-07-28 or later.
func modernClient(sess *mcp.ServerSession) bool {
	if sess == nil {
		return false
	}
	ip := sess.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= mrtrVersion
}

// invalidState is the JSON-RPC error of a refused requestState.
func invalidState(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
}

// openRound opens the sealed requestState of a retry (state "" is a first
// request) for server, method and name and returns the round to send: the
// client's answers and the upstream's state.
func (s *Server) openRound(state, server, method, name string, responses mcp.InputResponseMap) (*ports.InputRound, error) {
	if len(responses) > maxInputResponses {
		return nil, invalidState(&stateError{"too_many_input_responses"})
	}
	r := &ports.InputRound{Responses: inputResponses(responses)}
	if state == "" {
		return r, nil
	}
	st, err := s.seal.open(state)
	if err != nil {
		return nil, invalidState(err)
	}
	if st.Server != server || st.Method != method || st.Name != name {
		return nil, invalidState(errStateMismatch)
	}
	r.State = st.Upstream
	return r, nil
}

// inputResponses are the client's answers the session forwards: answers
// to elicitations and roots requests (a sampling answer is left out:
// sampling is never asked through serve; so is anything else).
func inputResponses(m mcp.InputResponseMap) map[string]ports.InputResponse {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]ports.InputResponse, len(m))
	for k, v := range m {
		switch a := v.(type) {
		case *mcp.ElicitResult:
			if a == nil {
				continue
			}
			switch ports.ElicitAction(a.Action) {
			case ports.ElicitAccept, ports.ElicitDecline, ports.ElicitCancel:
				out[k] = ports.InputResponse{Elicit: &ports.ElicitResult{Action: ports.ElicitAction(a.Action), Content: a.Content}}
			}
		case *mcp.ListRootsResult:
			if a == nil {
				continue
			}
			roots := make([]ports.Root, 0, len(a.Roots))
			for _, rt := range a.Roots {
				if rt != nil {
					roots = append(roots, ports.Root{URI: rt.URI, Name: rt.Name})
				}
			}
			out[k] = ports.InputResponse{Roots: roots}
		}
	}
	return out
}

// handOut turns the questions of r (a round the session handed on) into
// the input requests and sealed requestState of serve's own
// input_required result for sess's client, or returns the text of the
// error result when the client cannot take one of them.
func (s *Server) handOut(sess *mcp.ServerSession, r *ports.InputRound, server, method, name string) (mcp.InputRequestMap, string, string) {
	var caps *mcp.ClientCapabilities
	if ip := sess.InitializeParams(); ip != nil {
		caps = ip.Capabilities
	}
	out := make(mcp.InputRequestMap, len(r.Requests))
	for k, q := range r.Requests {
		switch {
		case q.Kind == ports.InputElicit && q.Elicit != nil && elicits(caps, q.Elicit.Mode):
			out[k] = elicitParams(*q.Elicit)
		case q.Kind == ports.InputRoots && caps != nil && (caps.RootsV2 != nil || caps.Roots.ListChanged):
			out[k] = &mcp.ListRootsParams{}
		default:
			return nil, "", "mcpward: the server asked for input this client did not declare it can give (" + ReasonInputUnavailable + ")"
		}
	}
	var tok string
	if r.NextState != "" || len(out) > 0 {
		var err error
		tok, err = s.seal.seal(sealedState{Server: server, Method: method, Name: name, Upstream: r.NextState,
			Expiry: s.seal.now().Add(s.in.timeout)})
		if err != nil {
			return nil, "", "mcpward: the server's request state could not be handed on (" + stateReason(err) + ")"
		}
	}
	return out, tok, ""
}

// elicits reports whether a client that declared caps takes an
// elicitation of mode.
func elicits(caps *mcp.ClientCapabilities, mode ports.ElicitMode) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	if mode == ports.ElicitURL {
		return e.URL != nil
	}
	// {} declares form; so does form; url alone does not.
	return e.Form != nil || e.URL == nil
}

// promptRound returns the ctx of a prompts/get of name by a modern
// client (or a retry carrying a requestState) with the round it sends, or
// ctx unchanged and nil for a legacy client; an error for a refused state.
func (s *Server) promptRound(ctx context.Context, name string, req *mcp.GetPromptRequest) (context.Context, *ports.InputRound, string, error) {
	var state string
	var responses mcp.InputResponseMap
	if req.Params != nil {
		state, responses = req.Params.RequestState, req.Params.InputResponses
	}
	if state == "" && !modernClient(req.Session) {
		return ctx, nil, "", nil
	}
	server := ""
	if ps, ok := s.b.(PromptServers); ok {
		server = ps.PromptServer(name)
	}
	round, err := s.openRound(state, server, methodPrompt, name, responses)
	if err != nil {
		return ctx, nil, "", err
	}
	return ports.WithInputRound(ctx, round), round, server, nil
}

// handedPrompt is the input_required result of a prompts/get whose round
// was handed on, or the error when the client cannot take its questions.
func (s *Server) handedPrompt(sess *mcp.ServerSession, round *ports.InputRound, server, name string) (*mcp.GetPromptResult, error) {
	reqs, tok, refused := s.handOut(sess, round, server, methodPrompt, name)
	if refused != "" {
		return nil, &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: refused}
	}
	return &mcp.GetPromptResult{InputRequests: reqs, RequestState: tok}, nil
}

// callHanded serves the first request of a tools/call of name by a
// modern client that declared no elicitation (so no upstream of the
// legacy era can ask it during the call, and nothing is parked): one
// upstream request, its round handed on.
func (s *Server) callHanded(ctx context.Context, name string, args json.RawMessage, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	server := ""
	if ts, ok := s.b.(ToolServers); ok {
		server = ts.ToolServer(name)
	}
	var responses mcp.InputResponseMap
	if req.Params != nil {
		responses = req.Params.InputResponses
	}
	round, err := s.openRound("", server, methodCall, name, responses)
	if err != nil {
		return nil, err
	}
	r, err := s.b.CallTool(ports.WithInputRound(ctx, round), name, args)
	if err != nil {
		return errorResult(err.Error()), nil
	}
	if round.Requests != nil {
		return s.handedCall(req.Session, round, server, name), nil
	}
	return toResult(r), nil
}

// handedCall is the input_required result of a tools/call of name whose
// round was handed on, or the error result when the client cannot take
// its questions.
func (s *Server) handedCall(sess *mcp.ServerSession, round *ports.InputRound, server, name string) *mcp.CallToolResult {
	reqs, tok, refused := s.handOut(sess, round, server, methodCall, name)
	if refused != "" {
		return errorResult(refused)
	}
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: tok}
}

// A client before 2026-07-28 cannot take an input_required result. When
// an upstream of the modern era asks during such a client's tools/call
// or prompts/get, serve puts each question to that client itself, on the
// session whose request caused it (elicitation/create, roots/list: the
// SDK sends them on that request's own stream over HTTP), and sends the
// answers to the upstream with its state echoed, at most maxLegacyRounds
// times. A question the client did not declare it can take ends the
// request by name (input_unavailable), as for a modern client.

// maxLegacyRounds bounds the requests serve sends after the first for a
// legacy client (the bound a session puts on its own rounds).
const maxLegacyRounds = 8

// ReasonInputRoundsExceeded is the reason word of the error of a request
// whose upstream asked more than maxLegacyRounds times in a row.
const ReasonInputRoundsExceeded = "input_rounds_exceeded"

// legacyRounds runs do (one upstream request carrying the round) until
// the upstream answers, putting each round's questions to sess's client.
// It returns the text of the refusal that ended the request, or do's
// error.
func (s *Server) legacyRounds(ctx context.Context, sess *mcp.ServerSession, do func(context.Context, *ports.InputRound) error) (string, error) {
	round := &ports.InputRound{}
	for n := 0; ; n++ {
		if err := do(ports.WithInputRound(ctx, round), round); err != nil {
			return "", err
		}
		if round.Requests == nil {
			return "", nil
		}
		if n >= maxLegacyRounds {
			return "mcpward: the server asked for input too many times (" + ReasonInputRoundsExceeded + ")", nil
		}
		answers, refused := s.askLegacy(ctx, sess, round.Requests)
		if refused != "" {
			return refused, nil
		}
		round = &ports.InputRound{Responses: answers, State: round.NextState}
	}
}

// askLegacy puts reqs to sess's client one at a time, in key order, and
// returns its answers, or the text of the refusal.
func (s *Server) askLegacy(ctx context.Context, sess *mcp.ServerSession, reqs map[string]ports.InputRequest) (map[string]ports.InputResponse, string) {
	unavailable := "mcpward: the server asked for input this client did not declare it can give (" + ReasonInputUnavailable + ")"
	if sess == nil {
		return nil, unavailable
	}
	var caps *mcp.ClientCapabilities
	if ip := sess.InitializeParams(); ip != nil {
		caps = ip.Capabilities
	}
	out := make(map[string]ports.InputResponse, len(reqs))
	for _, k := range slices.Sorted(maps.Keys(reqs)) {
		q := reqs[k]
		switch {
		case q.Kind == ports.InputElicit && q.Elicit != nil && elicits(caps, q.Elicit.Mode):
			res, err := sess.Elicit(ctx, elicitParams(*q.Elicit))
			if err != nil || res == nil {
				return nil, "mcpward: the client's answer could not be had (elicitation_failed)"
			}
			a := inputResponses(mcp.InputResponseMap{k: res})[k]
			if a.Elicit == nil {
				return nil, "mcpward: the client's answer could not be had (elicitation_failed)"
			}
			out[k] = a
		case q.Kind == ports.InputRoots && caps != nil && (caps.RootsV2 != nil || caps.Roots.ListChanged):
			res, err := sess.ListRoots(ctx, nil)
			if err != nil || res == nil {
				return nil, "mcpward: the client's roots could not be had (roots_failed)"
			}
			out[k] = inputResponses(mcp.InputResponseMap{k: res})[k]
		default:
			return nil, unavailable
		}
	}
	return out, ""
}
