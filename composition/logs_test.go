package composition

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/secret"
	"github.com/mcpward/mcpward/core/textsafe"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// logRecord is one record a recordingHandler got, its attributes by key.
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]any
}

// recordingHandler is a slog.Handler keeping every record at or above min.
type recordingHandler struct {
	min  slog.Level
	mu   sync.Mutex
	recs []logRecord
}

func (h *recordingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler                { return h }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, attrs: map[string]any{}}
	r.Attrs(func(a slog.Attr) bool { rec.attrs[a.Key] = a.Value.Any(); return true })
	h.mu.Lock()
	h.recs = append(h.recs, rec)
	h.mu.Unlock()
	return nil
}

func (h *recordingHandler) records() []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]logRecord(nil), h.recs...)
}

func TestLevelOf(t *testing.T) {
	for in, want := range map[ports.LogLevel]slog.Level{
		ports.LogDebug: slog.LevelDebug, ports.LogInfo: slog.LevelInfo, ports.LogNotice: slog.LevelInfo,
		ports.LogWarning: slog.LevelWarn, ports.LogError: slog.LevelError, ports.LogCritical: slog.LevelError,
		ports.LogAlert: slog.LevelError, ports.LogEmergency: slog.LevelError, "": slog.LevelInfo, "verbose\x1b": slog.LevelInfo,
	} {
		assert.Equal(t, want, LevelOf(in), "%q", in)
	}
	for in, want := range map[slog.Level]ports.LogLevel{
		slog.LevelDebug - 4: ports.LogDebug, slog.LevelDebug: ports.LogDebug, slog.LevelInfo: ports.LogInfo,
		slog.LevelInfo + 1: ports.LogWarning, slog.LevelWarn: ports.LogWarning, slog.LevelError: ports.LogError, slog.LevelError + 4: ports.LogError,
	} {
		assert.Equal(t, want, mcpLevel(in), "%v", in)
	}
}

func TestServerLogLevel(t *testing.T) {
	at := func(l slog.Level) *slog.Logger { return slog.New(&recordingHandler{min: l}) }
	tests := []struct {
		name   string
		logger *slog.Logger
		level  slog.Level
		want   slog.Level
		on     bool
	}{
		{"no logger", nil, slog.LevelDebug, 0, false},
		{"off", at(slog.LevelDebug), ServerLogsOff, 0, false},
		{"zero is info", at(slog.LevelDebug), 0, slog.LevelInfo, true},
		{"debug asked, debug enabled", at(slog.LevelDebug), slog.LevelDebug, slog.LevelDebug, true},
		{"the logger raises it", at(slog.LevelWarn), slog.LevelDebug, slog.LevelWarn, true},
		{"a logger enabling nothing", at(slog.LevelError + 1), slog.LevelDebug, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, on := serverLogLevel(tt.logger, tt.level)
			assert.Equal(t, tt.on, on)
			if on {
				assert.Equal(t, tt.want, got)
			}
		})
	}
}

func TestServerLogRateLimit(t *testing.T) {
	h := &recordingHandler{min: slog.LevelDebug}
	now := time.Unix(1000, 0)
	l := newServerLogs(slog.New(h), slog.LevelInfo, func() time.Time { return now })
	l.connector(nil, "flood", nil)
	l.connector(nil, "quiet", nil)
	for range 1000 {
		l.forward("flood", ports.LogMessage{Level: ports.LogInfo, Text: "x"})
	}
	l.forward("flood", ports.LogMessage{Level: ports.LogDebug, Text: "below the level"})
	l.forward("quiet", ports.LogMessage{Level: ports.LogError, Text: "another server has its own bucket"})
	recs := h.records()
	require.Len(t, recs, ServerLogBurst+1)
	assert.Equal(t, "quiet", recs[ServerLogBurst].attrs[AttrServer])

	now = now.Add(time.Second) // ServerLogRate more
	l.forward("flood", ports.LogMessage{Level: ports.LogWarning, Text: "y", Dropped: 3})
	for range 999 {
		l.forward("flood", ports.LogMessage{Level: ports.LogWarning, Text: "y"})
	}
	recs = h.records()[ServerLogBurst+1:]
	require.Len(t, recs, 1+ServerLogRate, "the count of the dropped ones, then what the rate allows")
	assert.Equal(t, MsgServerLogDropped, recs[0].msg)
	assert.Equal(t, slog.LevelWarn, recs[0].level)
	assert.EqualValues(t, 1000-ServerLogBurst+3, recs[0].attrs[AttrDropped], "dropped here, and the ones the session dropped")
	for _, r := range recs[1:] {
		assert.Equal(t, MsgServerLog, r.msg)
		assert.Equal(t, slog.LevelWarn, r.level)
	}

	l.close()
	recs = h.records()
	last := recs[len(recs)-1]
	assert.Equal(t, MsgServerLogDropped, last.msg, "Close logs what was dropped since")
	assert.EqualValues(t, 1000-ServerLogRate, last.attrs[AttrDropped])
	l.close()
	assert.Len(t, h.records(), len(recs), "nothing more to report")
}

func TestServerLogMaskedAndSanitized(t *testing.T) {
	const secretValue = "tok-Canary-91bd33"
	ghp := "ghp_" + strings.Repeat("A1b2", 9)
	def := definition.Decode(definition.Source{Tier: ports.TierUser, Origin: "u", Data: []byte(
		`{"mcpServers": {"s": {"command": "s", "env": {"API_TOKEN": "${API_TOKEN}"}}}}`)})
	res := definition.Resolve([]definition.Document{def})
	s, _ := res.Server("s")
	m, err := definition.Materialize(s.Def, func(string) (string, bool) { return secretValue, true })
	require.NoError(t, err)

	h := &recordingHandler{min: slog.LevelDebug}
	l := newServerLogs(slog.New(h), slog.LevelDebug, nil)
	l.connector(nil, "s", m)
	l.forward("s", ports.LogMessage{Level: "warning\x1b[2J", Logger: "db\u202e" + secretValue,
		Text: "auth with " + secretValue + " and " + ghp + "\x1b]0;title\x07\nnext line\xff " + strings.Repeat("z", 2*MaxServerLogText)})
	recs := h.records()
	require.Len(t, recs, 1)
	r := recs[0]
	all := r.attrs[AttrLevel].(string) + r.attrs[AttrLogger].(string) + r.attrs[AttrText].(string)
	assert.NotContains(t, all, secretValue)
	assert.NotContains(t, all, ghp)
	assert.NotContains(t, all, "\x1b")
	assert.NotContains(t, all, "\x07")
	assert.NotContains(t, all, "\n")
	assert.NotContains(t, all, "\u202e")
	text := r.attrs[AttrText].(string)
	assert.LessOrEqual(t, len(text), MaxServerLogText)
	assert.True(t, strings.HasSuffix(text, "…"))
	assert.True(t, strings.HasPrefix(text, "auth with "), text)
	assert.Contains(t, text, "next line\uFFFD ")
	assert.Equal(t, slog.LevelInfo, r.level, "an unknown level is info")
}

func TestSanitizeLog(t *testing.T) {
	for in, want := range map[string]string{
		"plain":              "plain",
		"a\tb\r\nc":          "a b  c",
		"\x00\x7f\u0085\xc3": "\uFFFD\uFFFD\uFFFD\uFFFD",
		"é" + "\u200b":       "é\uFFFD",
	} {
		assert.Equal(t, want, sanitizeLog(in, 100), "%q", in)
	}
	assert.Equal(t, "abc…", sanitizeLog("abcdefgh", 6))
	assert.Equal(t, "é…", sanitizeLog("éééé", 6), "cut on a character boundary")
	assert.Equal(t, "éé", sanitizeLog("éé", 4), "fits exactly")
}

// TestServerLogsEndToEnd: a go-sdk server over Streamable HTTP logs at
// every level from a tool; the Host asked it for info and above (the
// server filters the rest: logging/setLevel was sent), and the records
// reach the host's logger masked: the token the server was sent in its
// Authorization header never shows.
func TestServerLogsEndToEnd(t *testing.T) {
	const token = "tok-Canary-e2e-4410"
	srv := mcp.NewServer(&mcp.Implementation{Name: "logger", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "log", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			auth := req.Extra.Header.Get("Authorization")
			for _, l := range []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical"} {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: l, Logger: "auth", Data: string(l) + ": got " + auth})
			}
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "error", Data: map[string]any{"code": 7}})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "logged"}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()

	h := &recordingHandler{min: slog.LevelDebug}
	host, err := New(Ports{Approvals: portstest.NewApprovalStore(), Audit: portstest.NewAuditLog()}, Config{
		Lookup: func(k string) (string, bool) { return token, k == "LOG_TOKEN" },
		Logger: slog.New(h),
	})
	require.NoError(t, err)
	srcs := []definition.Source{{Tier: ports.TierUser, Origin: "u", Data: []byte(`{"mcpServers": {"logger": {"type": "http", "url": "` +
		ts.URL + `/mcp", "headers": {"Authorization": "Bearer ${LOG_TOKEN}"}}}}`)}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := host.Connect(ctx, srcs, nil)
	defer f.Close()
	require.Equal(t, StateConnected, result(t, f, "logger").State)
	_, err = f.CallServerTool(ctx, "logger", "log", json.RawMessage(`{}`))
	require.NoError(t, err)

	want := []struct {
		level slog.Level
		mcp   string
	}{{slog.LevelInfo, "info"}, {slog.LevelInfo, "notice"}, {slog.LevelWarn, "warning"}, {slog.LevelError, "error"}, {slog.LevelError, "critical"}, {slog.LevelError, "error"}}
	require.Eventually(t, func() bool { return len(serverLogRecords(h)) == len(want) }, 10*time.Second, 5*time.Millisecond)
	recs := serverLogRecords(h)
	for i, w := range want {
		r := recs[i]
		assert.Equal(t, w.level, r.level, "record %d", i)
		assert.Equal(t, w.mcp, r.attrs[AttrLevel], "record %d", i)
		assert.Equal(t, "logger", r.attrs[AttrServer])
		assert.NotContains(t, r.attrs[AttrText], token, "masked like stderr")
	}
	assert.Equal(t, "info: got "+secret.Redacted, recs[0].attrs[AttrText])
	assert.Equal(t, `{"code":7}`, recs[5].attrs[AttrText])
}

// serverLogRecords are the MsgServerLog records of h.
func serverLogRecords(h *recordingHandler) []logRecord {
	var out []logRecord
	for _, r := range h.records() {
		if r.msg == MsgServerLog {
			out = append(out, r)
		}
	}
	return out
}

// FuzzSanitizeLog: whatever a server sends, the text that reaches the
// logger is valid UTF-8 without control or invisible formatting
// characters, and within its bound.
func FuzzSanitizeLog(f *testing.F) {
	for _, s := range []string{"", "plain", "a\x1b[31mb\x07", "\xff\xfe", "é\u202eé", strings.Repeat("€", 50)} {
		f.Add(s, 16)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = 4 + int(uint(n)%200)
		got := sanitizeLog(s, n)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		if len(got) > n {
			t.Fatalf("%d bytes over the bound %d", len(got), n)
		}
		for _, r := range got {
			if textsafe.Unsafe(r) {
				t.Fatalf("control character %U kept in %q", r, got)
			}
		}
	})
}
