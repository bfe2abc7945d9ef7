package ports

// LogLevel is the severity of a server's log message, as MCP's logging
// utility names it (RFC 5424's levels).
type LogLevel string

// The MCP log levels, least severe first.
const (
	LogDebug     LogLevel = "debug"
	LogInfo      LogLevel = "info"
	LogNotice    LogLevel = "notice"
	LogWarning   LogLevel = "warning"
	LogError     LogLevel = "error"
	LogCritical  LogLevel = "critical"
	LogAlert     LogLevel = "alert"
	LogEmergency LogLevel = "emergency"
)

// MaxLogText bounds LogMessage.Text, in bytes.
const MaxLogText = 64 << 10

// MaxLogLogger bounds LogMessage.Logger, in bytes.
const MaxLogLogger = 128

// LogMessage is one log message a server sent (notifications/message).
// Every field is the server's own and untrusted: it may hold secrets,
// invalid UTF-8 and terminal control sequences. A host masks and
// sanitizes it before showing or logging it.
type LogMessage struct {
	// Level is the level the server gave, as sent: one of the LogLevel
	// constants for a well-behaved server, anything for another.
	Level LogLevel
	// Logger is the server's logger name ("" when it gave none), cut to
	// MaxLogLogger bytes.
	Logger string
	// Text is the message's data: a JSON string's value, any other JSON
	// value compact, cut to MaxLogText bytes.
	Text string
	// Truncated reports that Text was cut.
	Truncated bool
	// Dropped is how many log messages of the server the session dropped
	// unread since the previous one it delivered: a server sending faster
	// than the host reads has its messages coalesced (see Signals.Log).
	Dropped int
}
