package ports

import "context"

// InputRound is one round of a multi round-trip request (MCP 2026-07-28,
// SEP-2322) that a host hands on to a client of its own instead of
// answering the server's questions itself (mcpward serve for a client on
// protocol 2026-07-28 or later). A host puts it into the ctx of a tool
// call or a prompts/get (WithInputRound); a session of the modern era
// then:
//
//   - sends Responses and State with the request (State echoed byte for
//     byte: it is the server's request state of the round before, never
//     changed by the host);
//   - when the server answers input_required, runs no round itself: it
//     checks the result against the bounds it applies to its own rounds
//     (input requests and request-state bytes), validates each input
//     request as it validates an elicitation, refuses sampling by name as
//     always, and sets Requests and NextState; the call then returns an
//     empty error result (a prompt: an empty result) the host discards.
//
// A legacy session ignores it. The session writes Requests and NextState
// before Call returns and never after; the host reads them after Call
// returned. An InputRound is used for one call.
type InputRound struct {
	// Responses are the client's answers to the round before, by the
	// server's keys; nil on a first request.
	Responses map[string]InputResponse
	// State is the server's request state of the round before, echoed;
	// "" on a first request.
	State string

	// Requests are the server's questions of this round, by its keys,
	// set by the session; nil when the server answered.
	Requests map[string]InputRequest
	// NextState is the server's request state of this round ("" none),
	// at most the session's bound.
	NextState string
}

// InputKind is what an input request asks for.
type InputKind string

// Input kinds a session hands on (sampling is refused, never handed on).
const (
	InputElicit InputKind = "elicitation"
	InputRoots  InputKind = "roots"
)

// InputRequest is one question of an input_required result, validated.
type InputRequest struct {
	Kind InputKind
	// Elicit is the question of an InputElicit request, validated like an
	// elicitation/create request (ServerID set).
	Elicit *ElicitRequest
}

// InputResponse is a client's answer to one InputRequest: Elicit for an
// elicitation, Roots (non-nil, possibly empty) for a roots request.
type InputResponse struct {
	Elicit *ElicitResult
	Roots  []Root
}

type inputRoundKey struct{}

// WithInputRound returns ctx carrying r for the one call made with it.
func WithInputRound(ctx context.Context, r *InputRound) context.Context {
	return context.WithValue(ctx, inputRoundKey{}, r)
}

// InputRoundOf returns the InputRound WithInputRound put into ctx, or nil.
func InputRoundOf(ctx context.Context) *InputRound {
	r, _ := ctx.Value(inputRoundKey{}).(*InputRound)
	return r
}
