package mcpsession

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/secret"
	"github.com/mcpward/mcpward/core/textsafe"
)

// MaxServerMessage is how many bytes of a server's own error message a
// refusal's Detail keeps (after masking and escaping).
const MaxServerMessage = 300

// minMaskedValue is the shortest argument value masked out of a server's
// message: shorter ones would mangle its words and hide nothing.
const minMaskedValue = 4

// withServerMessage adds the server's own message to the refusal of a
// JSON-RPC error reply to a tools/call, prompts/get or resources/read
// ("invalid params: Resource demo://nope not found"), so the user and the
// model see what the server said beside the reason word. The message is a
// peer's text: every argument string value of the request (values, the
// caller's or the model's, never reach an error), every value the Conn's
// Mask hides (the definition's env and header values) and every literal
// credential shape are replaced by secret.Redacted, then the rest is
// escaped under core/textsafe's rule and cut to MaxServerMessage bytes.
// Any other error is returned unchanged.
func (s *session) withServerMessage(err, cause error, o op, values []string) error {
	var re *refusal.Error
	var we *jsonrpc.Error
	if !errors.As(err, &re) || re.Reason != o.rejected || !errors.As(cause, &we) {
		return err
	}
	msg := s.sanitizeMessage(we.Message, values)
	if msg == "" {
		return err
	}
	c := *re
	if c.Detail != "" {
		c.Detail += ": "
	}
	c.Detail += msg
	return &c
}

// sanitizeMessage is withServerMessage's rule for a server's text.
func (s *session) sanitizeMessage(msg string, values []string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return ""
	}
	if s.conn.Mask != nil {
		msg = s.conn.Mask(msg)
	}
	msg = maskValues(msg, values)
	msg = secret.MaskLiterals(msg)
	return textsafe.Fit(msg, MaxServerMessage, false)
}

// maskValues replaces every occurrence of every value of at least
// minMaskedValue bytes in msg by secret.Redacted, longest value first.
func maskValues(msg string, values []string) string {
	vs := slices.Clone(values)
	slices.SortFunc(vs, func(a, b string) int { return len(b) - len(a) })
	for _, v := range vs {
		if len(v) >= minMaskedValue {
			msg = strings.ReplaceAll(msg, v, secret.Redacted)
		}
	}
	return msg
}

// maxArgValues bounds how many string values argumentValues collects.
const maxArgValues = 256

// argumentValues returns the values of a call's JSON arguments (every
// string leaf and the text of every number, never an object's keys), at
// most maxArgValues; nothing when they do not decode.
func argumentValues(args json.RawMessage) []string {
	if len(args) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(args))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		if len(out) >= maxArgValues {
			return
		}
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case json.Number:
			out = append(out, x.String())
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
