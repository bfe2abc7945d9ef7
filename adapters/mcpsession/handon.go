package mcpsession

import (
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// Handing rounds on (ports.InputRound): a host that forwards a request
// for a client of its own on 2026-07-28 or later (mcpward serve) has
// that client answer the server's questions, not its own ports. The
// session then sends the client's answers and the server's request state
// with the request, and an input_required result ends the call with the
// questions in the InputRound instead of a round of the session's own.
// The bounds of the session's own rounds hold (MaxInputRequests,
// MaxRequestState; the rounds themselves are the host's to bound, one
// request each), each elicitation is validated exactly as one the session
// would answer (elicit.go), sampling is refused by name (Unsupported
// "sampling_refused") and a request of no known kind is malformed.

// handOnResult is the result Call returns when the questions of an
// input_required result went to the host's InputRound: an error result
// with no content, which the host discards.
var handOnResult = ports.CallResult{Content: []byte("[]"), IsError: true}

// roundParams returns the client's answers of r as the SDK's, to send
// with the request.
func roundParams(r *ports.InputRound) mcp.InputResponseMap {
	if len(r.Responses) == 0 {
		return nil
	}
	out := make(mcp.InputResponseMap, len(r.Responses))
	for k, v := range r.Responses {
		switch {
		case v.Elicit != nil:
			out[k] = &mcp.ElicitResult{Action: string(v.Elicit.Action), Content: v.Elicit.Content}
		case v.Roots != nil:
			roots := make([]*mcp.Root, 0, len(v.Roots))
			for _, rt := range v.Roots {
				roots = append(roots, &mcp.Root{URI: rt.URI, Name: rt.Name})
			}
			out[k] = &mcp.ListRootsResult{Roots: roots}
		}
	}
	return out
}

// handOn checks the input_required result's reqs and state and puts them
// into r, or returns the refusal that ends the request.
func (s *session) handOn(r *ports.InputRound, reqs mcp.InputRequestMap, state string) error {
	if len(reqs) > MaxInputRequests {
		return roundRefusal{re: s.refuse(refusal.Protocol, ReasonTooManyInputs, "")}
	}
	if len(state) > MaxRequestState {
		return roundRefusal{re: s.refuse(refusal.Protocol, ReasonRequestStateTooBig, "")}
	}
	out := make(map[string]ports.InputRequest, len(reqs))
	for _, k := range slices.Sorted(maps.Keys(reqs)) {
		switch p := reqs[k].(type) {
		case *mcp.ElicitParams:
			er, rerr := elicitRequest(s.server, p)
			if rerr != nil {
				rerr.Server, rerr.Origin = s.server, s.conn.Origin
				return roundRefusal{re: rerr}
			}
			out[k] = ports.InputRequest{Kind: ports.InputElicit, Elicit: &er}
		case *mcp.ListRootsParams:
			out[k] = ports.InputRequest{Kind: ports.InputRoots}
		case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
			return roundRefusal{re: s.refuse(refusal.Unsupported, ReasonSamplingRefused, "")}
		default:
			return roundRefusal{re: s.refuse(refusal.Protocol, "malformed_reply", "an input request of no known kind")}
		}
	}
	if len(out) == 0 {
		return roundRefusal{re: s.refuse(refusal.Protocol, "malformed_reply", "an input_required result without input requests")}
	}
	r.Requests, r.NextState = out, state
	return nil
}
