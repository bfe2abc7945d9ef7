package composition

import (
	"github.com/mcpward/mcpward/adapters/mcpsession/mcpserve"
	"github.com/mcpward/mcpward/ports"
)

// ServerLog is one server log message (notifications/message) as
// ConnectOptions.OnServerLog gets it: already masked (the server's own
// secrets removed), sanitized and cut like the Config.Logger record.
type ServerLog struct {
	// Server is the server id.
	Server string
	// Level is the level the server gave (sanitized; not necessarily one
	// MCP defines).
	Level ports.LogLevel
	// Logger is the server's logger name, masked and sanitized; "" none.
	Logger string
	// Text is the message, masked and sanitized, cut to MaxServerLogText
	// bytes.
	Text string
}

// ServerLog passes r to g's clients as the gateway's own log message
// (notifications/message), to each client at the level it set with
// logging/setLevel (a client that set none gets none): its logger is
// r's server name, or, for a Gateway fronting one server, r's own logger;
// a Gateway fronting one server passes that server's messages alone. It
// never blocks (a full queue drops the message); give it as
// ConnectOptions.OnServerLog (through a pointer set once the Gateway is
// made). Safe for concurrent use.
func (g *Gateway) ServerLog(r ServerLog) {
	logger := r.Server
	if g.only != "" {
		if r.Server != g.only {
			return
		}
		logger = r.Logger
	}
	g.srv.Log(mcpserve.LogMessage{Level: r.Level, Logger: logger, Text: r.Text})
}
