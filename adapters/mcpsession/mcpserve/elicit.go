package mcpserve

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/ports"
)

// ErrNoElicitingClient is Elicit's error when the question cannot be put
// to a client: not exactly one client is connected, or the one connected
// did not declare elicitation (of the request's mode).
var ErrNoElicitingClient = errors.New("mcpserve: no single connected client declared elicitation")

// mrtrVersion is the first protocol version whose servers may not send
// requests to the client while serving one: a question is then handed to
// the client inside the call's result (multi round-trip requests,
// mrtr.go).
const mrtrVersion = "2026-07-28"

// Elicit asks the one connected client r's question and returns its
// answer: a ports.Elicitor for the upstream servers. It refuses with
// ErrNoElicitingClient (or an error wrapping it) unless exactly one client
// is connected and it declared elicitation. A client on a protocol version
// before 2026-07-28 is sent elicitation/create; one on 2026-07-28 or later
// gets the question as the input-required result of the one call of r's
// server it has running (refused when not exactly one runs, or when
// Options.MaxPendingInputs calls already wait for an answer), and Elicit
// returns the answer of the client's retry ("cancel" when the client does
// not come back within Options.InputTimeout). Over HTTP a host should not
// offer it at all (which client would answer is not known).
func (s *Server) Elicit(ctx context.Context, r ports.ElicitRequest) (ports.ElicitResult, error) {
	var only *mcp.ServerSession
	n := 0
	for ss := range s.srv.Sessions() {
		only = ss
		n++
	}
	if n != 1 {
		return ports.ElicitResult{}, ErrNoElicitingClient
	}
	ip := only.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return ports.ElicitResult{}, ErrNoElicitingClient
	}
	if roundsElicit(ip) {
		return s.elicitInRound(ctx, only, r)
	}
	res, err := only.Elicit(ctx, elicitParams(r))
	if err != nil {
		return ports.ElicitResult{}, err
	}
	return ports.ElicitResult{Action: ports.ElicitAction(res.Action), Content: res.Content}, nil
}

// elicitParams is r as elicitation/create's params.
func elicitParams(r ports.ElicitRequest) *mcp.ElicitParams {
	p := &mcp.ElicitParams{Mode: string(r.Mode), Message: r.Message}
	if r.Mode == ports.ElicitURL {
		p.URL, p.ElicitationID = r.URL, r.ElicitationID
	} else {
		p.RequestedSchema = schemaJSON(r.Schema)
	}
	return p
}

// schemaJSON renders a validated form back as the restricted JSON Schema
// of elicitation/create.
func schemaJSON(s ports.ElicitSchema) map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, f := range s.Fields {
		p := map[string]any{"type": string(f.Type)}
		if f.Title != "" {
			p["title"] = f.Title
		}
		if f.Description != "" {
			p["description"] = f.Description
		}
		if f.Format != "" {
			p["format"] = f.Format
		}
		if f.MinLength != nil {
			p["minLength"] = *f.MinLength
		}
		if f.MaxLength != nil {
			p["maxLength"] = *f.MaxLength
		}
		if f.Minimum != nil {
			p["minimum"] = *f.Minimum
		}
		if f.Maximum != nil {
			p["maximum"] = *f.Maximum
		}
		if f.MinItems != nil {
			p["minItems"] = *f.MinItems
		}
		if f.MaxItems != nil {
			p["maxItems"] = *f.MaxItems
		}
		if f.Default != nil {
			p["default"] = f.Default
		}
		if len(f.Options) > 0 {
			titled := false
			values := make([]string, len(f.Options))
			consts := make([]map[string]any, len(f.Options))
			for i, o := range f.Options {
				values[i] = o.Value
				consts[i] = map[string]any{"const": o.Value, "title": o.Title}
				titled = titled || o.Title != ""
			}
			target := p
			if f.Type == ports.FieldMultiSelect {
				target = map[string]any{"type": "string"}
				p["items"] = target
			}
			switch {
			case titled && f.Type == ports.FieldMultiSelect:
				target["anyOf"] = consts
			case titled:
				target["oneOf"] = consts
			default:
				target["enum"] = values
			}
		}
		props[f.Name] = p
		if f.Required {
			required = append(required, f.Name)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}
