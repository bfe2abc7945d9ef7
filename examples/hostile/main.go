// Command hostile is an MCP server that misbehaves on purpose, one way per
// mode, so that mcpward's tests (and anyone checking an MCP client) can
// drive a real process that does what a crafted or broken server would do:
// names and text made to attack a terminal, lines that never end, pages
// that never stop, calls that never answer, processes that will not die,
// crashes that print secrets.
//
// It imports no mcpward package and is not built on the go-sdk server: the
// SDK would refuse to misbehave, so the JSON-RPC is written by hand (one
// JSON message per line over stdio; one POST per message over Streamable
// HTTP, answered with a text/event-stream response).
//
// Usage:
//
//	hostile -mode NAME [flags]                  MCP over stdio
//	hostile -mode NAME -http 127.0.0.1:PORT     Streamable HTTP at /mcp
//
// Modes (see modes.go for exactly what each one does):
//
//	normal             a well-behaved server: tools ok and echo; with
//	                   -hang-list it never answers tools/list
//	long-names         tool names of 65, 128 and 300 bytes, with spaces,
//	                   unicode, NUL, DEL and invalid UTF-8, duplicates and
//	                   an empty name; ok is callable
//	control-chars      terminal control sequences in every string the
//	                   server sends; echo returns them (isError with
//	                   "error": true), rpc_error returns them in a
//	                   JSON-RPC error; with -description-bytes N also
//	                   tool long_description, whose description has N
//	                   bytes
//	endless-line       answers initialize with a line that never ends
//	huge-pages         tools/list pages of about -page-bytes bytes each,
//	                   every one with a nextCursor
//	no-init            never answers initialize
//	hang-call          tool hang never answers; -progress sends progress
//	                   notifications every -progress-every ms meanwhile
//	ignore-term        ignores SIGTERM and starts two grandchildren that
//	                   ignore it too (stdio only); -setsid puts one of them
//	                   in a session of its own
//	crash-secrets      prints its environment and argv to stderr, then exits
//	                   3 before answering initialize (stdio only)
//	crash-after-init   tool crash makes the process exit with status 2
//	wrong-version      answers initialize with protocolVersion 1999-01-01
//	flood              sends -count notifications as fast as it can after
//	                   initialization, then serves ok
//	server-requests    sends sampling/createMessage, elicitation/create and
//	                   roots/list to the client after initialization
//	malformed          answers initialize with invalid JSON, a response with
//	                   a wrong id and one without "jsonrpc", never with a
//	                   valid answer
//	exit-before-init   prints "fatal: missing API key" to stderr and exits 3
//	                   at once (stdio only)
//
// With -http the address must be loopback (127.0.0.0/8, [::1] or
// localhost); the server prints its URL (http://HOST:PORT/mcp) alone on the
// first line of stdout, then serves until SIGINT or SIGTERM. Over HTTP a
// message the server sends "after initialization" (flood,
// server-requests) goes into the response stream of the first request that
// follows notifications/initialized, before that request's answer; the
// standalone GET stream is refused (405).
//
// With -spawn-log FILE every start of the server (not of the ignore-term
// grandchildren) appends "MODE PID" to FILE, so a test can count how many
// times a client spawned it.
//
// Exit statuses: 0 when stdin closes (stdio) or on a signal (HTTP), 2 for a
// usage error, an unknown mode, a stdio-only mode with -http or a
// non-loopback address, and whatever a mode says (crash-after-init 2,
// crash-secrets and exit-before-init 3).
//
// Nothing a mode does escapes the process tree it was started in, except
// the -setsid grandchild of ignore-term (which is the point of that flag).
// Grandchildren exit by themselves after -lifetime, so a test that fails to
// kill them leaves nothing running for long.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Exit statuses.
const (
	exitOK    = 0
	exitUsage = 2
)

// ProtocolVersion is the protocol version every mode but wrong-version
// answers initialize with (the one mcpward pins).
const ProtocolVersion = "2025-11-25"

// options are the command-line flags.
type options struct {
	mode          string
	http          string
	pageBytes     int
	toolsPerPage  int
	progress      bool
	progressEvery int
	count         int
	setsid        bool
	lifetime      time.Duration
	spawnLog      string
	hangList      bool
	descBytes     int
}

// env is what a mode runs with.
type env struct {
	ctx    context.Context
	opts   options
	argv   []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// mode is one way of misbehaving.
type mode struct {
	// stdioOnly modes refuse -http.
	stdioOnly bool
	// run does what the mode does and returns the exit status.
	run func(e *env) int
}

// modes is the table of modes by name. The names are a contract: tests of
// mcpward's CLI start this binary with them.
var modes = map[string]mode{
	"normal":           {run: runNormal},
	"long-names":       {run: runLongNames},
	"control-chars":    {run: runControlChars},
	"endless-line":     {run: runEndlessLine},
	"huge-pages":       {run: runHugePages},
	"no-init":          {run: runNoInit},
	"hang-call":        {run: runHangCall},
	"ignore-term":      {stdioOnly: true, run: runIgnoreTerm},
	"crash-secrets":    {stdioOnly: true, run: runCrashSecrets},
	"crash-after-init": {run: runCrashAfterInit},
	"wrong-version":    {run: runWrongVersion},
	"flood":            {run: runFlood},
	"server-requests":  {run: runServerRequests},
	"malformed":        {run: runMalformed},
	"exit-before-init": {stdioOnly: true, run: runExitBeforeInit},
	// sleeper is internal: the grandchildren of ignore-term.
	"sleeper": {stdioOnly: true, run: runSleeper},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run parses argv (argv[0] is the program) and runs the mode.
func run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o options
	fs := flag.NewFlagSet("hostile", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.mode, "mode", "", "the `name` of the misbehaviour (required)")
	fs.StringVar(&o.http, "http", "", "serve Streamable HTTP on this loopback `address` instead of stdio")
	fs.IntVar(&o.pageBytes, "page-bytes", 14<<20, "huge-pages: about how many `bytes` each tools/list page has")
	fs.IntVar(&o.toolsPerPage, "tools-per-page", 1000, "huge-pages: how many tools each page lists")
	fs.BoolVar(&o.progress, "progress", false, "hang-call: send progress notifications while hanging")
	fs.IntVar(&o.progressEvery, "progress-every", 100, "hang-call: milliseconds between progress notifications")
	fs.IntVar(&o.count, "count", 100000, "flood: how many notifications to send")
	fs.BoolVar(&o.setsid, "setsid", false, "ignore-term: one grandchild leaves the process group (setsid)")
	fs.DurationVar(&o.lifetime, "lifetime", 10*time.Minute, "ignore-term: how long the grandchildren live at most")
	fs.StringVar(&o.spawnLog, "spawn-log", "", "append one line (\"MODE PID\") to this `file` when the server starts, so a test can count how often it was spawned")
	fs.BoolVar(&o.hangList, "hang-list", false, "normal, ignore-term: never answer tools/list (discovery hangs)")
	fs.IntVar(&o.descBytes, "description-bytes", 0, "control-chars: also offer tool long_description, whose description (control sequences first) has this many `bytes`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hostile -mode NAME [-http 127.0.0.1:PORT] [flags]")
		fmt.Fprintln(stderr, "modes:", strings.Join(modeNames(), " "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(argv[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	// Positional arguments are accepted and ignored, so a test can put
	// something in argv for crash-secrets to print.
	m, ok := modes[o.mode]
	if !ok {
		fmt.Fprintf(stderr, "hostile: unknown mode %q\n", o.mode)
		fs.Usage()
		return exitUsage
	}
	if o.http != "" && m.stdioOnly {
		fmt.Fprintf(stderr, "hostile: mode %s is for stdio only\n", o.mode)
		return exitUsage
	}
	if o.pageBytes < 1 || o.toolsPerPage < 1 || o.progressEvery < 1 || o.count < 0 || o.descBytes < 0 {
		fmt.Fprintln(stderr, "hostile: -page-bytes, -tools-per-page and -progress-every must be positive, -count not negative")
		return exitUsage
	}
	if o.spawnLog != "" {
		f, err := os.OpenFile(o.spawnLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			fmt.Fprintln(stderr, "hostile: cannot open the -spawn-log file:", err)
			return exitUsage
		}
		_, err = fmt.Fprintf(f, "%s %d\n", o.mode, os.Getpid())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			fmt.Fprintln(stderr, "hostile: cannot write the -spawn-log file:", err)
			return exitUsage
		}
	}
	return m.run(&env{ctx: ctx, opts: o, argv: argv, stdin: stdin, stdout: stdout, stderr: stderr})
}

// modeNames returns the public mode names, sorted.
func modeNames() []string {
	var names []string
	for n := range modes {
		if n != "sleeper" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// serve serves s over stdio, or over HTTP with -http, and returns the exit
// status.
func (e *env) serve(s *server) int {
	if e.opts.http == "" {
		return serveStdio(e.ctx, s, e.stdin, e.stdout, e.stderr)
	}
	return serveHTTP(e.ctx, s, e.opts.http, e.stdout, e.stderr)
}
