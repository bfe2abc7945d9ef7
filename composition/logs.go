package composition

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpward/mcpward/adapters/mcpsession"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/textsafe"
	"github.com/mcpward/mcpward/ports"
)

// Server log messages (notifications/message) reach Config.Logger as one
// record each, with this message and these attributes: AttrServer (the
// server id), AttrLevel (the level the server gave, sanitized), AttrLogger
// (its logger name, sanitized; absent when empty) and AttrText (the
// message, masked and sanitized, cut to MaxServerLogText bytes).
const (
	MsgServerLog        = "server log"
	MsgServerLogDropped = "server log messages dropped"
	AttrServer          = "server"
	AttrLevel           = "mcp_level"
	AttrLogger          = "logger"
	AttrText            = "text"
	AttrDropped         = "dropped"
)

// Bounds of the server log messages a Host forwards.
const (
	// MaxServerLogText is how many bytes of a message's text reach the
	// logger; a longer text is cut and ends in "…".
	MaxServerLogText = 4096
	// ServerLogBurst and ServerLogRate bound how many messages of one
	// server reach the logger: ServerLogBurst at once, then ServerLogRate
	// a second. A message beyond them is dropped and counted; the count
	// is logged (MsgServerLogDropped, at Warn) before the next message
	// that passes, and when the Fleet closes.
	ServerLogBurst = 20
	ServerLogRate  = 5
)

// ServerLogsOff as Config.ServerLogLevel asks no server for log messages.
const ServerLogsOff = slog.Level(1 << 20)

// LevelOf maps an MCP log level to a slog level: debug to Debug; info and
// notice to Info; warning to Warn; error, critical, alert and emergency
// to Error; anything else (a level no MCP version defines) to Info.
func LevelOf(l ports.LogLevel) slog.Level {
	switch l {
	case ports.LogDebug:
		return slog.LevelDebug
	case ports.LogWarning:
		return slog.LevelWarn
	case ports.LogError, ports.LogCritical, ports.LogAlert, ports.LogEmergency:
		return slog.LevelError
	}
	return slog.LevelInfo
}

// mcpLevel is the MCP level logging/setLevel asks for to get slog level l
// and above.
func mcpLevel(l slog.Level) ports.LogLevel {
	switch {
	case l <= slog.LevelDebug:
		return ports.LogDebug
	case l <= slog.LevelInfo:
		return ports.LogInfo
	case l <= slog.LevelWarn:
		return ports.LogWarning
	}
	return ports.LogError
}

// serverLogLevel is the least level of server log messages a Host with
// logger and level (Config.ServerLogLevel) forwards, and false when it
// forwards none: level, raised to the least of Debug, Info, Warn and Error
// that logger enables.
func serverLogLevel(logger *slog.Logger, level slog.Level) (slog.Level, bool) {
	if logger == nil || level >= ServerLogsOff {
		return 0, false
	}
	for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
		if logger.Enabled(context.Background(), l) {
			return max(l, level), true
		}
	}
	return 0, false
}

// serverLogs forwards the log messages of one Fleet's servers to the
// Host's logger. Safe for concurrent use.
type serverLogs struct {
	logger *slog.Logger
	min    slog.Level
	now    func() time.Time
	hook   func(ServerLog) // ConnectOptions.OnServerLog; nil: none

	mu      sync.Mutex
	servers map[string]*serverLog
}

// serverLog is the state of one server: its secret mask and its rate
// limit (a token bucket).
type serverLog struct {
	mask    secretMask
	tokens  float64
	last    time.Time
	dropped int
}

func newServerLogs(logger *slog.Logger, min slog.Level, now func() time.Time) *serverLogs {
	if now == nil {
		now = time.Now
	}
	return &serverLogs{logger: logger, min: min, now: now, servers: map[string]*serverLog{}}
}

// connector returns c passing the log messages of server name (whose
// definition materialized as m) to l.
func (l *serverLogs) connector(c ports.Connector, name string, m *definition.Materialized) ports.Connector {
	l.mu.Lock()
	l.servers[name] = &serverLog{mask: newSecretMask(m), tokens: ServerLogBurst, last: l.now()}
	l.mu.Unlock()
	return logConnector{Connector: c, log: func(msg ports.LogMessage) { l.forward(name, msg) }}
}

// logConnector is a Connector whose sessions pass their log messages to
// log.
type logConnector struct {
	ports.Connector
	log func(ports.LogMessage)
}

// Connect connects with s's Log set.
func (c logConnector) Connect(ctx context.Context, t ports.Target, s ports.Signals) (ports.Session, error) {
	s.Log = c.log
	return c.Connector.Connect(ctx, t, s)
}

// forward logs msg of server name: below the minimum level it is ignored;
// beyond the server's rate it is dropped and counted (as are the messages
// the session dropped, msg.Dropped); otherwise a pending count of dropped
// messages is logged first, then msg, masked and sanitized.
func (l *serverLogs) forward(name string, msg ports.LogMessage) {
	level := LevelOf(msg.Level)
	l.mu.Lock()
	s := l.servers[name]
	if s == nil {
		l.mu.Unlock()
		return
	}
	s.dropped += msg.Dropped
	if level < l.min {
		l.mu.Unlock()
		return
	}
	now := l.now()
	if el := now.Sub(s.last); el > 0 {
		s.tokens = min(ServerLogBurst, s.tokens+el.Seconds()*ServerLogRate)
	}
	s.last = now
	if s.tokens < 1 {
		s.dropped++
		l.mu.Unlock()
		return
	}
	s.tokens--
	dropped := s.dropped
	s.dropped = 0
	mask := s.mask
	l.mu.Unlock()

	ctx := context.Background()
	if dropped > 0 {
		l.logger.Log(ctx, slog.LevelWarn, MsgServerLogDropped, AttrServer, name, AttrDropped, dropped)
	}
	rec := ServerLog{Server: name, Level: ports.LogLevel(sanitizeLog(string(msg.Level), 32)),
		Text: sanitizeLog(mask.apply(msg.Text), MaxServerLogText)}
	if msg.Logger != "" {
		rec.Logger = sanitizeLog(mask.apply(msg.Logger), ports.MaxLogLogger)
	}
	attrs := []any{AttrServer, name, AttrLevel, string(rec.Level)}
	if rec.Logger != "" {
		attrs = append(attrs, AttrLogger, rec.Logger)
	}
	attrs = append(attrs, AttrText, rec.Text)
	l.logger.Log(ctx, level, MsgServerLog, attrs...)
	if l.hook != nil {
		l.hook(rec)
	}
}

// flush logs the count of every server's dropped messages not logged yet.
func (l *serverLogs) flush() {
	type pending struct {
		name string
		n    int
	}
	var out []pending
	l.mu.Lock()
	for name, s := range l.servers {
		if s.dropped > 0 {
			out = append(out, pending{name, s.dropped})
			s.dropped = 0
		}
	}
	l.mu.Unlock()
	for _, p := range out {
		l.logger.Log(context.Background(), slog.LevelWarn, MsgServerLogDropped, AttrServer, p.name, AttrDropped, p.n)
	}
}

// sanitizeLog returns s safe for any log handler and terminal: invalid
// UTF-8 and every character textsafe.Unsafe names (mcpward's one rule:
// controls, bidirectional and invisible format characters) become U+FFFD,
// but tab and newlines, which become spaces (a log record is one line);
// the result is cut to at most n bytes on a character boundary, ending in
// "…" when cut.
func sanitizeLog(s string, n int) string {
	var b strings.Builder
	b.Grow(min(len(s), n))
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				r = '\uFFFD'
			}
		}
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			r = ' '
		case textsafe.Unsafe(r):
			r = '\uFFFD'
		}
		if b.Len()+utf8.RuneLen(r) > n {
			out := b.String()
			k := min(max(n-len("…"), 0), len(out))
			for k > 0 && k < len(out) && !utf8.RuneStart(out[k]) {
				k--
			}
			return out[:k] + "…"
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fleetLogs returns the forwarder of a new Fleet's server log messages
// (to the Host's logger, and to hook when not nil), nil when there is
// none: no hook, and no Logger, ServerLogsOff, or a logger that enables
// none of the levels. With a hook every level is asked for (the hook's
// receiver filters); the logger still gets only the levels it enables.
func (h *Host) fleetLogs(hook func(ServerLog)) *serverLogs {
	lvl, ok := serverLogLevel(h.logger, h.serverLogLevel)
	logger := h.logger
	if !ok {
		logger = slog.New(slog.DiscardHandler)
	}
	if hook != nil {
		lvl, ok = slog.LevelDebug, true
	}
	if !ok {
		return nil
	}
	// The rate is measured on the system clock, not Config.Now: a host
	// that fixes the time of its records must not silence its servers.
	l := newServerLogs(logger, lvl, nil)
	l.hook = hook
	return l
}

// sessionOptions returns o with LogLevel set to the level l asks servers
// for, unless o sets one (o is not changed; nil l returns o).
func (l *serverLogs) sessionOptions(o *mcpsession.Options) *mcpsession.Options {
	if l == nil {
		return o
	}
	var c mcpsession.Options
	if o != nil {
		c = *o
	}
	if c.LogLevel == "" {
		c.LogLevel = mcpLevel(l.min)
	}
	return &c
}

// wrap is connector, or c itself when l is nil.
func (l *serverLogs) wrap(c ports.Connector, name string, m *definition.Materialized) ports.Connector {
	if l == nil {
		return c
	}
	return l.connector(c, name, m)
}

// close is flush, for a nil l too.
func (l *serverLogs) close() {
	if l != nil {
		l.flush()
	}
}
