package mcpserve

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/ports"
)

// Bounds of the log messages a Server passes to its clients.
const (
	// MaxLogQueue is how many messages Log lets wait for delivery; a
	// message beyond it is dropped (and counted: see LogsDropped).
	MaxLogQueue = 64
	// LogSendTimeout bounds the delivery of one message to one client.
	LogSendTimeout = 2 * time.Second
)

// LogMessage is one log message a Server passes to its clients as its
// own notifications/message.
type LogMessage struct {
	// Level is the message's MCP level; one no MCP version defines is
	// sent as "info".
	Level ports.LogLevel
	// Logger is the logger name; "" sends none.
	Logger string
	// Text is the message, sent as the notification's data. The caller
	// masks and sanitizes it: it passes as given.
	Text string
}

// Log passes m to every connected client that asked for log messages at
// m's level or below (logging/setLevel: a client that never set a level
// gets none, as the SDK decides). It never blocks: m waits in a queue of
// MaxLogQueue messages (dropped and counted when the queue is full), and
// one goroutine delivers the queue in order, each message to each client
// within LogSendTimeout. Safe for concurrent use; after Close it drops m.
func (s *Server) Log(m LogMessage) {
	select {
	case <-s.stop:
		return
	default:
	}
	select {
	case s.logq <- m:
	default:
		s.mu.Lock()
		s.logsDropped++
		s.mu.Unlock()
	}
}

// LogsDropped returns how many messages Log dropped so far because its
// queue was full.
func (s *Server) LogsDropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logsDropped
}

// deliverLogs sends the queued log messages until Close.
func (s *Server) deliverLogs() {
	defer close(s.logsDone)
	for {
		select {
		case <-s.stop:
			return
		case m := <-s.logq:
			p := &mcp.LoggingMessageParams{Level: mcpLogLevel(m.Level), Logger: m.Logger, Data: m.Text}
			for ss := range s.srv.Sessions() {
				ctx, cancel := context.WithTimeout(context.Background(), LogSendTimeout)
				_ = ss.Log(ctx, p) // a client gone or slow misses the message
				cancel()
			}
		}
	}
}

// mcpLogLevel is l when MCP defines it, else "info".
func mcpLogLevel(l ports.LogLevel) mcp.LoggingLevel {
	switch l {
	case ports.LogDebug, ports.LogInfo, ports.LogNotice, ports.LogWarning, ports.LogError,
		ports.LogCritical, ports.LogAlert, ports.LogEmergency:
		return mcp.LoggingLevel(l)
	}
	return mcp.LoggingLevel(ports.LogInfo)
}
