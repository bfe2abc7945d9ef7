package testserver

import (
	"encoding/json"
	"os"
	"time"
)

// ModeProgress is ModeOK with one more tool, "slow", whose call reports
// progress against the call's progress token (see ProgressMessage) and
// answers "token" or, when the call carried none, "no token" at once.
const ModeProgress = "progress"

// ProgressMessage is the message of the slow tool's progress notification
// number i (of 2), with an escape sequence that must never reach a
// terminal raw.
func ProgressMessage(i int) string { return "step " + string(rune('0'+i)) + " \x1b[2J" }

// progressTool is the slow tool's listing.
var progressTool = map[string]any{"name": "slow", "description": "Reports progress when asked, then answers.",
	"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"release": map[string]any{"type": "string"}}}}

// toolsOf are the tools of mode.
func toolsOf(mode string) []any {
	ts := tools()
	if mode == ModeProgress {
		ts = append(ts, progressTool)
	}
	return ts
}

// slowCall serves a call of the slow tool: with a progress token in the
// request's _meta it sends two progress notifications (1 of 2, 2 of 2),
// then waits until the file named by the argument "release" exists (at
// most a minute; no argument: no wait) and answers "token"; without a
// token it answers "no token" at once.
func slowCall(enc *json.Encoder, params json.RawMessage) map[string]any {
	var p struct {
		Arguments struct {
			Release string `json:"release"`
		} `json:"arguments"`
		Meta struct {
			ProgressToken any `json:"progressToken"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	text := func(s string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
	}
	if p.Meta.ProgressToken == nil {
		return text("no token")
	}
	for i := 1; i <= 2; i++ {
		_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{
			"progressToken": p.Meta.ProgressToken, "progress": i, "total": 2, "message": ProgressMessage(i)}})
	}
	if p.Arguments.Release != "" {
		for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(p.Arguments.Release); err == nil {
				break
			}
		}
	}
	return text("token")
}
