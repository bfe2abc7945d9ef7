// Package elicitui is how the CLI lets a server ask the user a question
// mid-call (MCP elicitation) and tells servers its roots: the
// --elicitation and --roots flags of the commands that connect, and the
// terminal prompt that asks a person.
//
// Without --elicitation, a run whose standard input and standard error
// are both terminals prompts; any other run declares no elicitation, so a
// server that needs it fails as before. --elicitation=defaults accepts
// every form with the server's defaults (for scripts and CI),
// --elicitation=decline declines every question, and
// --elicitation=prompt asks even when the streams are not terminals
// (reading answers from standard input). Every text a server sends
// (its name, its message, field titles, URLs) is shown through termsafe.
package elicitui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/spf13/pflag"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// The values of --elicitation.
const (
	// ModeAuto ("" — the flag not given): prompt on a terminal, else none.
	ModeAuto = ""
	// ModePrompt asks on the terminal (or standard input).
	ModePrompt = "prompt"
	// ModeDefaults accepts every form with its defaults, declines URLs.
	ModeDefaults = "defaults"
	// ModeDecline declines every question.
	ModeDecline = "decline"
)

// Flags are the values of --elicitation and --roots.
type Flags struct {
	// Mode is --elicitation, one of the Mode constants.
	Mode string
	// Roots is --roots: offer the workspace root to the servers.
	Roots bool
}

// AddFlags registers --elicitation and --roots on fs.
func AddFlags(fs *pflag.FlagSet, f *Flags) {
	fs.Var((*modeValue)(&f.Mode), "elicitation",
		"how to answer a server's questions (MCP elicitation): prompt, defaults (accept with the server's defaults) or decline; without it, prompt when stdin and stderr are terminals, else declare no elicitation")
	fs.BoolVar(&f.Roots, "roots", false, "tell the servers the workspace root (MCP roots)")
}

type modeValue string

func (v *modeValue) String() string { return string(*v) }
func (v *modeValue) Type() string   { return "mode" }
func (v *modeValue) Set(s string) error {
	switch s {
	case ModePrompt, ModeDefaults, ModeDecline:
		*v = modeValue(s)
		return nil
	}
	return errors.New("want prompt, defaults or decline")
}

// Elicitation returns the elicitation options of a run with f on ios, or
// nil when the run declares none (ModeAuto off a terminal). A question
// mcpward refused (a nested form, an address that is not https, a second
// question while one is open...) is noted on ios.ErrOut, once per server
// and reason.
func (f Flags) Elicitation(ios *iostreams.IOStreams) *composition.ElicitationOptions {
	var el ports.Elicitor
	switch {
	case f.Mode == ModeDefaults:
		el = composition.ElicitDefaults()
	case f.Mode == ModeDecline:
		el = composition.ElicitDecline()
	case f.Mode == ModePrompt, ios.In != nil && ios.IsStdinTTY() && ios.IsStderrTTY():
		el = NewPrompter(ios.In, ios.ErrOut)
	default:
		return nil
	}
	n := &refusalNotes{w: ios.ErrOut, seen: map[string]bool{}}
	return &composition.ElicitationOptions{Elicitor: el, OnRefused: n.note}
}

// refusalNotes writes one line per refused question, once per server and
// reason.
type refusalNotes struct {
	w    io.Writer
	mu   sync.Mutex
	seen map[string]bool
}

func (n *refusalNotes) note(re *refusal.Error) {
	key := re.Server + "\x00" + re.Reason
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen[key] {
		return
	}
	n.seen[key] = true
	line := fmt.Sprintf("mcpward: refused a question from the server %s: %s", termsafe.Line(re.Server), re.Reason)
	if re.Detail != "" {
		line += " (" + termsafe.Line(re.Detail) + ")"
	}
	fmt.Fprintln(n.w, line)
}

// RootsOf returns the roots options of a run with f whose workspace root
// is dir, or nil without --roots (or when dir is "").
func (f Flags) RootsOf(dir string) *composition.RootsOptions {
	if !f.Roots || dir == "" {
		return nil
	}
	root, err := composition.FileRoot(dir)
	if err != nil {
		return nil
	}
	return &composition.RootsOptions{Roots: ports.NewRootSet(root)}
}

// maxTries is how many times a field is asked before the question is
// cancelled.
const maxTries = 3

// Prompter is a ports.Elicitor that asks a person: it writes the question
// to out and reads answers, one line each, from in. Questions from
// several servers are asked one at a time. An end of input, or ctx ending
// while it waits, cancels the question.
type Prompter struct {
	out io.Writer

	mu sync.Mutex // one question at a time; guards in and pending
	in *bufio.Reader
	// asking is non-zero while a question is on the terminal (see Quiet).
	asking atomic.Int32
	// pending is the read in flight when a question ended while it
	// waited: the next question takes its line rather than start a
	// second read.
	pending chan lineResult
}

type lineResult struct {
	line string
	err  error
}

// maxLine bounds one answer line; the rest of a longer line is dropped.
const maxLine = 64 << 10

// NewPrompter returns a Prompter reading in (nil: every question is
// cancelled) and writing out.
func NewPrompter(in io.Reader, out io.Writer) *Prompter {
	p := &Prompter{out: out}
	if in != nil {
		p.in = bufio.NewReader(in)
	}
	return p
}

// Quiet returns a writer to w that drops what is written while a question
// is on the terminal (progress notes must not break into a prompt).
func (p *Prompter) Quiet(w io.Writer) io.Writer { return quietWriter{w: w, p: p} }

type quietWriter struct {
	w io.Writer
	p *Prompter
}

func (q quietWriter) Write(b []byte) (int, error) {
	if q.p.asking.Load() > 0 {
		return len(b), nil
	}
	return q.w.Write(b)
}

// errCancel ends a question as cancelled.
var errCancel = errors.New("cancelled")

// read returns the next line, or errCancel at the end of input or when
// ctx ends. The read runs on its own goroutine, which ends when a line or
// the end of input arrives.
func (p *Prompter) read(ctx context.Context) (string, error) {
	if p.in == nil {
		return "", errCancel
	}
	if p.pending == nil {
		ch := make(chan lineResult, 1)
		p.pending = ch
		go func() {
			line, err := readLine(p.in)
			ch <- lineResult{line, err}
		}()
	}
	select {
	case lr := <-p.pending:
		p.pending = nil
		if lr.err != nil {
			return "", errCancel
		}
		return strings.TrimSpace(lr.line), nil
	case <-ctx.Done():
		return "", errCancel
	}
}

// readLine reads one line of at most maxLine bytes (dropping the rest);
// a last line without a newline counts.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(b) < maxLine {
			b = append(b, chunk[:min(len(chunk), maxLine-len(b))]...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil && len(b) == 0:
			return "", err
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
}

// Elicit asks the question r on the terminal.
func (p *Prompter) Elicit(ctx context.Context, r ports.ElicitRequest) (ports.ElicitResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asking.Add(1)
	defer p.asking.Add(-1)
	res, err := p.ask(ctx, r)
	if err != nil {
		fmt.Fprintln(p.out, "  (cancelled)")
		return ports.ElicitResult{Action: ports.ElicitCancel}, nil
	}
	return res, nil
}

func (p *Prompter) ask(ctx context.Context, r ports.ElicitRequest) (ports.ElicitResult, error) {
	fmt.Fprintf(p.out, "\nThe server %s asks:\n", termsafe.Line(r.ServerID))
	fmt.Fprintf(p.out, "  %s\n", indent(termsafe.Text(r.Message)))
	if r.Mode == ports.ElicitURL {
		fmt.Fprintf(p.out, "It asks you to open this address yourself (mcpward does not open it):\n  %s\n", termsafe.Line(r.URL))
		ok, err := p.yesNo(ctx, "Did you (or will you) open it? [y]es, [n]o, [c]ancel: ")
		if err != nil {
			return ports.ElicitResult{}, err
		}
		if !ok {
			return ports.ElicitResult{Action: ports.ElicitDecline}, nil
		}
		return ports.ElicitResult{Action: ports.ElicitAccept}, nil
	}
	ok, err := p.yesNo(ctx, "Answer it? [y]es, [n]o (decline), [c]ancel: ")
	if err != nil {
		return ports.ElicitResult{}, err
	}
	if !ok {
		return ports.ElicitResult{Action: ports.ElicitDecline}, nil
	}
	content := map[string]any{}
	for _, f := range r.Schema.Fields {
		v, set, err := p.field(ctx, f)
		if err != nil {
			return ports.ElicitResult{}, err
		}
		if set {
			content[f.Name] = v
		}
	}
	return ports.ElicitResult{Action: ports.ElicitAccept, Content: content}, nil
}

// yesNo asks until the answer is y, n or c (c and the end of input
// cancel).
func (p *Prompter) yesNo(ctx context.Context, q string) (bool, error) {
	for range maxTries {
		fmt.Fprint(p.out, q)
		l, err := p.read(ctx)
		if err != nil {
			return false, err
		}
		switch strings.ToLower(l) {
		case "y", "yes":
			return true, nil
		case "n", "no":
			return false, nil
		case "c", "cancel":
			return false, errCancel
		}
	}
	return false, errCancel
}

// field asks for one field's value; set is false when the field is left
// out (optional, no default, empty answer).
func (p *Prompter) field(ctx context.Context, f ports.ElicitField) (any, bool, error) {
	label := termsafe.Line(f.Name)
	if f.Title != "" {
		label = termsafe.Line(f.Title)
	}
	var hints []string
	hints = append(hints, string(f.Type))
	if f.Format != "" {
		hints = append(hints, f.Format)
	}
	if len(f.Options) > 0 {
		var os []string
		for _, o := range f.Options {
			s := termsafe.Line(o.Value)
			if o.Title != "" && o.Title != o.Value {
				s += " (" + termsafe.Line(o.Title) + ")"
			}
			os = append(os, s)
		}
		sep := "one of"
		if f.Type == ports.FieldMultiSelect {
			sep = "comma-separated, from"
		}
		hints = append(hints, sep+": "+strings.Join(os, ", "))
	}
	if f.Default != nil {
		hints = append(hints, "default "+termsafe.Line(display(f.Default)))
	}
	if f.Required {
		hints = append(hints, "required")
	}
	if f.Description != "" {
		fmt.Fprintf(p.out, "  %s\n", indent(termsafe.Text(f.Description)))
	}
	for range maxTries {
		fmt.Fprintf(p.out, "  %s [%s]: ", label, strings.Join(hints, "; "))
		l, err := p.read(ctx)
		if err != nil {
			return nil, false, err
		}
		if l == "" {
			if f.Default != nil {
				return f.Default, true, nil
			}
			if !f.Required {
				return nil, false, nil
			}
			fmt.Fprintln(p.out, "  an answer is required")
			continue
		}
		v, ok := parse(f, l)
		if !ok {
			fmt.Fprintf(p.out, "  not a valid %s\n", f.Type)
			continue
		}
		if err := f.Check(v); err != nil {
			reason := "invalid"
			var ce *ports.ElicitContentError
			if errors.As(err, &ce) {
				reason = ce.Reason
			}
			fmt.Fprintf(p.out, "  not accepted: %s\n", strings.ReplaceAll(reason, "_", " "))
			continue
		}
		return v, true, nil
	}
	return nil, false, errCancel
}

// parse reads a typed line as f's type.
func parse(f ports.ElicitField, l string) (any, bool) {
	switch f.Type {
	case ports.FieldString:
		return l, true
	case ports.FieldNumber, ports.FieldInteger:
		x, err := strconv.ParseFloat(l, 64)
		return x, err == nil
	case ports.FieldBoolean:
		switch strings.ToLower(l) {
		case "y", "yes", "true":
			return true, true
		case "n", "no", "false":
			return false, true
		}
		return nil, false
	case ports.FieldMultiSelect:
		var out []string
		for _, s := range strings.Split(l, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, true
	}
	return nil, false
}

// display is a default as the user would type it.
func display(v any) string {
	switch x := v.(type) {
	case []string:
		return strings.Join(x, ",")
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// indent indents every line after the first by two more spaces, so a
// server's text never starts a line of its own.
func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }
