package mcpsession

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// TestHandOn: with a ports.InputRound in the ctx, a modern session runs
// no round of its own: the input_required result's questions (validated,
// under the server's keys) and state go into the round and the call
// returns an empty error result; the next call sends the client's
// answers and the state echoed byte for byte, and returns the server's
// result. The host's Elicitor is never asked. A prompts/get is handed on
// the same way.
func TestHandOn(t *testing.T) {
	var mu sync.Mutex
	var sent []json.RawMessage
	p := modernPeer(func(method string, params json.RawMessage) json.RawMessage {
		mu.Lock()
		sent = append(sent, params)
		mu.Unlock()
		var in struct {
			InputResponses json.RawMessage `json:"inputResponses"`
		}
		_ = json.Unmarshal(params, &in)
		if len(in.InputResponses) > 0 {
			if method == "prompts/get" {
				return json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"ok"}}]}`)
			}
			return json.RawMessage(`{"content":[{"type":"text","text":"done"}]}`)
		}
		b, _ := json.Marshal(map[string]any{"resultType": "input_required", "requestState": "st\x00\u00e9" + canary,
			"inputRequests": map[string]any{
				"user_name": map[string]any{"method": "elicitation/create", "params": map[string]any{"message": "name?", "requestedSchema": confirmSchema}},
				"the_roots": map[string]any{"method": "roots/list", "params": map[string]any{}},
			}})
		return b
	})
	el := &recordingElicitor{answer: acceptDefaults}
	s := connect(t, New(fixedDialer(startMemPeer(t, p)), elicitOpts(el)), ports.Signals{})
	round := &ports.InputRound{}
	ctx := ports.WithInputRound(context.Background(), round)
	res, err := s.Call(ctx, ports.CallRequest{Name: "x", Arguments: json.RawMessage(`{}`)})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.JSONEq(t, `[]`, string(res.Content))
	require.Len(t, round.Requests, 2)
	assert.Equal(t, ports.InputElicit, round.Requests["user_name"].Kind)
	assert.Equal(t, "name?", round.Requests["user_name"].Elicit.Message)
	assert.Equal(t, "srv", round.Requests["user_name"].Elicit.ServerID)
	assert.Equal(t, ports.InputRoots, round.Requests["the_roots"].Kind)
	assert.Equal(t, "st\x00\u00e9"+canary, round.NextState)
	assert.Empty(t, el.requests(), "the host's Elicitor is not asked")

	next := &ports.InputRound{State: round.NextState, Responses: map[string]ports.InputResponse{
		"user_name": {Elicit: &ports.ElicitResult{Action: ports.ElicitAccept, Content: map[string]any{"confirmed": true}}},
		"the_roots": {Roots: []ports.Root{{URI: "file:///w", Name: "w"}}},
	}}
	res, err = s.Call(ports.WithInputRound(context.Background(), next), ports.CallRequest{Name: "x", Arguments: json.RawMessage(`{}`)})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Nil(t, next.Requests)
	mu.Lock()
	var second struct {
		RequestState   string                     `json:"requestState"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	require.NoError(t, json.Unmarshal(sent[1], &second))
	mu.Unlock()
	assert.Equal(t, round.NextState, second.RequestState, "the state echoed unchanged")
	assert.JSONEq(t, `{"action":"accept","content":{"confirmed":true}}`, string(second.InputResponses["user_name"]))
	assert.JSONEq(t, `{"roots":[{"uri":"file:///w","name":"w"}]}`, string(second.InputResponses["the_roots"]))

	pr := &ports.InputRound{}
	out, err := s.GetPrompt(ports.WithInputRound(context.Background(), pr), ports.GetPromptRequest{Name: "p"})
	require.NoError(t, err)
	assert.Empty(t, out.Messages)
	require.Len(t, pr.Requests, 2)
	assert.Equal(t, 1, p.count("prompts/get"))
}

// TestHandOnBounds: a handed-on round keeps the session's bounds and
// rules: too many questions, megabytes of state, sampling, a malformed
// form or an empty round are refused by name and nothing is put into
// the round.
func TestHandOnBounds(t *testing.T) {
	many := map[string]any{}
	for i := range MaxInputRequests + 1 {
		many[strings.Repeat("k", i+1)] = map[string]any{"method": "roots/list", "params": map[string]any{}}
	}
	answer := func(reqs map[string]any, state string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"resultType": "input_required", "inputRequests": reqs, "requestState": state})
		return b
	}
	for _, tt := range []struct {
		name   string
		answer json.RawMessage
		class  refusal.Class
		reason string
	}{
		{"too many questions", answer(many, ""), refusal.Protocol, ReasonTooManyInputs},
		{"megabytes of state", inputRequired(strings.Repeat("s", MaxRequestState+1)), refusal.Protocol, ReasonRequestStateTooBig},
		{"sampling", answer(map[string]any{"s": map[string]any{"method": "sampling/createMessage",
			"params": map[string]any{"messages": []any{}, "maxTokens": 1}}}, "x"), refusal.Unsupported, ReasonSamplingRefused},
		{"a form that is no form", answer(map[string]any{"q": map[string]any{"method": "elicitation/create",
			"params": map[string]any{"message": "m", "requestedSchema": map[string]any{"type": "string"}}}}, ""), refusal.Protocol, ReasonElicitSchemaInvalid},
		{"no questions", answer(map[string]any{}, "x"), refusal.Protocol, "malformed_reply"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := modernPeer(func(string, json.RawMessage) json.RawMessage { return tt.answer })
			s := connect(t, New(fixedDialer(startMemPeer(t, p)), nil), ports.Signals{})
			round := &ports.InputRound{}
			_, err := s.Call(ports.WithInputRound(context.Background(), round), ports.CallRequest{Name: "x", Arguments: json.RawMessage(`{}`)})
			requireRefusal(t, err, tt.class, tt.reason)
			assert.Nil(t, round.Requests)
			assert.Equal(t, 1, p.count("tools/call"))
		})
	}
}
