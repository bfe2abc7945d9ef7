package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/core/supervisor"
	"github.com/mcpward/mcpward/ports"
)

// supervision is how the CLI supervises each server it connects: a few
// attempts, each bounded, so a command never hangs on a dead server.
var supervision = supervisor.Options{MaxAttempts: 3, ConnectTimeout: 20 * time.Second, MaxDelay: 2 * time.Second}

// toolsJSON is the stable JSON shape of one server of tools --json.
type toolsJSON struct {
	Name  string `json:"name"`
	State string `json:"state"`
	// Class is the failure class ("" unless failed, or connected with a
	// failed discovery).
	Class       string               `json:"class"`
	Reason      string               `json:"reason"`
	Partial     map[string]string    `json:"partial"`
	Stale       bool                 `json:"stale"`
	Tools       []toolJSON           `json:"tools"`
	Rejected    []catalog.Rejected   `json:"rejected"`
	Diagnostics []catalog.Diagnostic `json:"diagnostics"`
}

// toolJSON is one tool of tools --json.
type toolJSON struct {
	Name        string          `json:"name"`
	ServerTool  string          `json:"server_tool"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// callJSON is call --json's output.
type callJSON struct {
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	IsError   bool            `json:"is_error"`
	Truncated bool            `json:"truncated"`
	Content   json.RawMessage `json:"content"`
}

// classOf is the class word of r, "" when r has no failure.
func classOf(r composition.ServerResult) string {
	if r.State == composition.StateFailed || r.State == composition.StateConnected && r.Reason != "" {
		return r.Class.String()
	}
	return ""
}

func toToolsJSON(r composition.ServerResult) toolsJSON {
	j := toolsJSON{
		Name: r.Name, State: string(r.State), Class: classOf(r), Reason: r.Reason, Stale: r.Stale,
		Partial: map[string]string{}, Tools: []toolJSON{}, Rejected: []catalog.Rejected{}, Diagnostics: []catalog.Diagnostic{},
	}
	for k, v := range r.Partial {
		j.Partial[string(k)] = v
	}
	for _, t := range r.Tools {
		j.Tools = append(j.Tools, toolJSON{Name: t.Name, ServerTool: t.ServerTool, Description: t.Description, InputSchema: t.InputSchema})
	}
	j.Rejected = append(j.Rejected, r.Rejected...)
	j.Diagnostics = append(j.Diagnostics, r.Diagnostics...)
	return j
}

// progress writes one line per server to w as its connection ends.
type progress struct {
	mu   sync.Mutex
	w    io.Writer
	done map[string]bool
}

func newProgress(w io.Writer) *progress { return &progress{w: w, done: map[string]bool{}} }

// on is the ConnectOptions.OnStatus of the CLI.
func (p *progress) on(name string, st supervisor.Status) {
	switch st.State {
	case supervisor.Ready:
		n := 0
		if st.Catalog != nil {
			n = len(st.Catalog.Tools)
		}
		p.line(name, fmt.Sprintf("connected (%d tool%s)", n, plural(n)))
	case supervisor.Failed:
		reason := ""
		if st.Err != nil {
			reason = st.Err.Reason
		}
		p.line(name, failure(st.Err)+hint(name, reason))
	}
}

// finish writes the line of every connected or failed server whose line
// was not written yet (a connect that ended with the command's ctx).
func (p *progress) finish(rs []composition.ServerResult) {
	for _, r := range rs {
		switch r.State {
		case composition.StateConnected:
			p.line(r.Name, fmt.Sprintf("connected (%d tool%s)", len(r.Tools), plural(len(r.Tools))))
		case composition.StateFailed:
			p.line(r.Name, "failed ("+r.Class.String()+" "+r.Reason+")"+hint(r.Name, r.Reason))
		}
	}
}

func (p *progress) line(name, what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done[name] {
		return
	}
	p.done[name] = true
	fmt.Fprintf(p.w, "connecting %s… %s\n", name, what)
}

func failure(err *refusal.Error) string {
	if err == nil {
		return "failed"
	}
	return "failed (" + err.Class.String() + " " + err.Reason + ")"
}

// hint is what a failure line adds for a reason the user can fix with
// one command.
func hint(name, reason string) string {
	if reason == oauth.ReasonSignInRequired {
		return "; sign in with \"mcpward login " + name + "\""
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// connect connects the servers named (all when none).
func (a *app) connect(ctx context.Context, names []string, p *progress) *composition.Fleet {
	opts := &composition.ConnectOptions{Names: names, Supervisor: &supervision}
	if p != nil {
		opts.OnStatus = p.on
	}
	return a.host.Connect(ctx, librarySources(a.sources), opts)
}

// tools connects and prints the catalog. It fails when a server failed to
// connect, or when a server named on the command line is not connected.
func (a *app) tools(ctx context.Context, names []string) int {
	p := newProgress(a.env.stderr)
	f := a.connect(ctx, names, p)
	defer f.Close()
	rs := f.Servers()
	p.finish(rs)
	code := exitOK
	for _, r := range rs {
		if r.State == composition.StateFailed || r.State == composition.StateUnknown ||
			len(names) > 0 && r.State != composition.StateConnected {
			code = exitFailure
		}
	}
	if a.opts.json {
		out := make([]toolsJSON, len(rs))
		for i, r := range rs {
			out[i] = toToolsJSON(r)
		}
		writeJSON(a.env.stdout, out)
		return code
	}
	writeTools(a.env.stdout, rs)
	return code
}

// writeTools writes tools' text.
func writeTools(w io.Writer, rs []composition.ServerResult) {
	if len(rs) == 0 {
		fmt.Fprintln(w, "No MCP servers are defined. Run \"mcpward doctor\" to see which files were read.")
		return
	}
	for i, r := range rs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: %s\n", r.Name, serverLine(r))
		if len(r.Tools) > 0 {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			for _, t := range r.Tools {
				fmt.Fprintf(tw, "  %s\t%s\n", t.Name, firstLine(t.Description))
			}
			_ = tw.Flush()
		} else if r.State == composition.StateConnected {
			fmt.Fprintln(w, "  (no tools)")
		}
		for _, rj := range r.Rejected {
			if rj.Kind == catalog.KindServer {
				continue
			}
			fmt.Fprintf(w, "  rejected %s %s: %s\n", rj.Kind, printable(rj.Name), rj.Reason)
		}
		for _, d := range r.Diagnostics {
			fmt.Fprintf(w, "  note %s: %s\n", printable(d.Tool), d.Reason)
		}
	}
}

// serverLine is a server's state with its marks.
func serverLine(r composition.ServerResult) string {
	switch r.State {
	case composition.StateConnected:
		s := "connected"
		if len(r.Partial) > 0 {
			kinds := make([]string, 0, len(r.Partial))
			for k, v := range r.Partial {
				kinds = append(kinds, string(k)+" "+v)
			}
			sort.Strings(kinds)
			s += ", PARTIAL (" + strings.Join(kinds, ", ") + ")"
		}
		if r.Stale {
			s += ", STALE"
		}
		if r.Reason != "" {
			s += ", discovery failed (" + r.Class.String() + " " + r.Reason + ")"
		}
		return s
	case composition.StateFailed:
		return "failed (" + r.Class.String() + " " + r.Reason + ")"
	case composition.StateUnknown:
		return "unknown (no source defines it)"
	}
	s := string(r.State)
	if r.Reason != "" {
		s += " (" + r.Reason + ")"
	}
	if why, fix := explain(r.Evaluation); fix != "" {
		s += ": " + fix
	} else if why != "" && r.State != composition.StateAllowed {
		s += ": " + why
	}
	return s
}

// firstLine is the first line of a description, without control
// characters.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return printable(strings.TrimSpace(s))
}

// printable replaces control characters (a server's text must not drive
// the terminal).
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return '?'
		}
		return r
	}, s)
}

// call connects SERVER and calls its TOOL with the --args object.
func (a *app) call(ctx context.Context, server, tool, args string) int {
	f := a.connect(ctx, []string{server}, nil)
	defer f.Close()
	r := f.Servers()[0]
	switch r.State {
	case composition.StateConnected:
	case composition.StateFailed:
		return a.fail(&refusal.Error{Class: r.Class, Reason: r.Reason, Server: server, Detail: "the server could not be connected"})
	case composition.StateUnknown:
		return a.fail(refusal.New(refusal.Config, composition.ReasonUnknownServer, server))
	default:
		return a.fail(&refusal.Error{Class: refusal.Refused, Reason: r.Reason, Server: server,
			Detail: "the server is " + string(r.State) + "; run \"mcpward show " + server + "\""})
	}
	if args == "" {
		args = "{}"
	}
	res, err := f.Call(ctx, server, tool, json.RawMessage(args))
	if err != nil {
		return a.fail(err)
	}
	if res.Content == nil {
		res.Content = json.RawMessage("[]")
	}
	code := exitOK
	if res.IsError {
		code = exitFailure
	}
	if a.opts.json {
		writeJSON(a.env.stdout, callJSON{Server: server, Tool: tool, IsError: res.IsError, Truncated: res.Truncated, Content: res.Content})
		return code
	}
	writeContent(a.env.stdout, res)
	if res.IsError {
		fmt.Fprintf(a.env.stderr, "mcpward: %s %s returned an error result\n", server, tool)
	}
	if res.Truncated {
		fmt.Fprintln(a.env.stderr, "mcpward: the result was cut to the tool's size cap")
	}
	return code
}

// writeContent writes the text items of a result, one per line, and a
// placeholder for each other item.
func writeContent(w io.Writer, res ports.ToolResult) {
	var items []map[string]json.RawMessage
	if json.Unmarshal(res.Content, &items) != nil {
		fmt.Fprintln(w, "[unreadable content]")
		return
	}
	for _, it := range items {
		var typ, text string
		_ = json.Unmarshal(it["type"], &typ)
		if typ == "text" && json.Unmarshal(it["text"], &text) == nil {
			fmt.Fprintln(w, text)
			continue
		}
		fmt.Fprintf(w, "[%s content]\n", printable(typ))
	}
}
