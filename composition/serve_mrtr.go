package composition

import "github.com/mcpward/mcpward/adapters/mcpsession/mcpserve"

// ToolServer returns the server a call of the tool offered as name goes to
// ("" for the gateway's own tools and unknown names): with it a server's
// question during a multi round-trip call (a client on protocol 2026-07-28
// or later) is handed only to a call of that server, and a round handed on
// is sealed to that server.
func (b gatewayBackend) ToolServer(name string) string {
	rt, _ := b.g.routeOf(name)
	return rt.server
}

// PromptServer returns the server a prompts/get of the prompt offered as
// name goes to ("" for unknown names): a round of it handed on to a
// client on protocol 2026-07-28 or later is sealed to that server.
func (b gatewayBackend) PromptServer(name string) string {
	rt, _ := b.g.routeOf("prompt:" + name)
	return rt.server
}

var (
	_ mcpserve.ToolServers   = gatewayBackend{}
	_ mcpserve.PromptServers = gatewayBackend{}
)
