// Command server is a small example MCP server, written on the official Go
// SDK (github.com/modelcontextprotocol/go-sdk), that mcpward's demo, tests
// and benchmarks connect to. It imports no mcpward package: it is an
// ordinary third-party server as far as mcpward is concerned.
//
// It offers every kind of catalog entry, so a catalog shows them all:
//
//	tools
//	  echo        {text: string}             → the text, unchanged
//	  add         {a: number, b: number}     → the sum, as text and as
//	                                            structured content {"sum": n}
//	  word_count  {text: string}             → the number of words (runs of
//	                                            non-space), as text and as
//	                                            structured content {"words": n}
//	  slow        {ms: integer, 0..10000}    → sleeps ms milliseconds, then
//	                                            says so; a cancelled call stops
//	                                            sleeping at once (for abort tests)
//	prompts
//	  review      {text (required)}          → one user message asking for a
//	                                            review of text
//	resources
//	  example://readme                       → a short text/plain document
//
// Arguments that do not match a tool's input schema (a missing field, a
// string for a number, ms above 10000) give a tool result with isError set,
// as the SDK does for every schema violation.
//
// Usage:
//
//	server                        serve MCP over stdio (stdin/stdout)
//	server -http 127.0.0.1:PORT   serve Streamable HTTP at http://127.0.0.1:PORT/mcp
//	server -dynamic               also offer tool_add {name, field} and
//	                              tool_remove {name}, which add, replace and
//	                              remove tools at run time (each change
//	                              notifies tools/list_changed)
//
// In HTTP mode the address must be a loopback address: an IP literal in
// 127.0.0.0/8, [::1], or "localhost" (which means 127.0.0.1; no name is
// resolved). Anything else is refused with exit status 2: this server has no
// authentication and must not be reachable from another machine. PORT 0
// picks a free port. Once listening, the server prints exactly one line on
// stdout,
//
//	listening http://127.0.0.1:PORT/mcp
//
// so a test or a demo can read the port. SIGINT or SIGTERM shuts it down
// (exit status 0). In stdio mode the server exits when stdin closes.
//
// The server reads no environment variable and writes nothing but that line
// to stdout in HTTP mode (stdout is the protocol stream in stdio mode);
// errors go to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// Name and Version are the server's implementation identity, as clients
// see it in the initialize result.
const (
	Name    = "mcpward-example"
	Version = "1.0.0"
)

// MaxSlowMillis is the largest ms the slow tool accepts.
const MaxSlowMillis = 10000

// ReadmeURI is the URI of the static resource.
const ReadmeURI = "example://readme"

// readme is the text of the static resource.
const readme = "mcpward example server\n\nTools: echo, add, word_count, slow. Prompt: review. Resource: " + ReadmeURI + ".\n"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program: it parses args, then serves over stdio or HTTP
// until ctx ends (or stdin closes, over stdio), and returns the exit
// status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	httpAddr := fs.String("http", "", "serve Streamable HTTP on this loopback `address` (127.0.0.1:PORT, [::1]:PORT or localhost:PORT) instead of stdio")
	dynamic := fs.Bool("dynamic", false, "also offer tool_add and tool_remove, which change the tool list at run time")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: server [-http 127.0.0.1:PORT] [-dynamic]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(stderr, "server: unexpected arguments")
		fs.Usage()
		return exitUsage
	}
	srv := newServer(nil)
	if *dynamic {
		addDynamicTools(srv)
	}
	if *httpAddr == "" {
		t := &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}
		if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil {
			fmt.Fprintln(stderr, "server:", err)
			return exitFailure
		}
		return exitOK
	}
	addr, err := loopbackAddr(*httpAddr)
	if err != nil {
		fmt.Fprintln(stderr, "server:", err)
		return exitUsage
	}
	return serveHTTP(ctx, srv, addr, stdout, stderr)
}

// nopWriteCloser lets stdout be an io.WriteCloser the transport may close
// without closing the process's stdout.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// errNotLoopback is returned by loopbackAddr for an address that is not
// loopback.
var errNotLoopback = errors.New("-http: the address must be loopback (127.0.0.0/8, [::1] or localhost)")

// loopbackAddr validates a -http address: host:port where host is an IP
// literal in 127.0.0.0/8 or ::1 (no zone), or "localhost" (taken as
// 127.0.0.1, never resolved), and port is a decimal number in 0..65535.
// It returns the address to listen on.
func loopbackAddr(s string) (netip.AddrPort, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("-http: want host:port")
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || port == "" || (len(port) > 1 && port[0] == '0') {
		return netip.AddrPort{}, fmt.Errorf("-http: the port must be a number in 0..65535")
	}
	var ip netip.Addr
	if strings.EqualFold(host, "localhost") {
		ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
	} else {
		ip, err = netip.ParseAddr(host)
		// A mapped ::ffff:127.0.0.1 would listen on an IPv6 socket; refuse
		// it rather than guess, and refuse zones.
		if err != nil || ip.Zone() != "" || ip.Is4In6() || !ip.IsLoopback() {
			return netip.AddrPort{}, errNotLoopback
		}
	}
	return netip.AddrPortFrom(ip, uint16(p)), nil
}

// serveHTTP serves srv over Streamable HTTP at /mcp on addr until ctx ends.
func serveHTTP(ctx context.Context, srv *mcp.Server, addr netip.AddrPort, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", addr.String())
	if err != nil {
		fmt.Fprintln(stderr, "server: cannot listen:", err)
		return exitFailure
	}
	hs := &http.Server{Handler: newHTTPHandler(srv), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	fmt.Fprintf(stdout, "listening http://%s/mcp\n", ln.Addr())
	select {
	case err := <-served:
		fmt.Fprintln(stderr, "server:", err)
		return exitFailure
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		// Open SSE streams do not end by themselves; close them.
		_ = hs.Close()
	}
	return exitOK
}

// newHTTPHandler serves srv over Streamable HTTP at /mcp (and nothing
// else). The SDK's DNS-rebinding protection stays on (a request to a
// loopback address must name a loopback Host), and a cancelled request
// cancels its handler under every protocol version, so slow stops sleeping
// when its client goes away.
func newHTTPHandler(srv *mcp.Server) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{PropagateRequestCancellation: true}))
	return mux
}

// hooks lets a test observe the server from inside. The zero value does
// nothing.
type hooks struct {
	// slowEnded is called when a slow call returns, with nil when it slept
	// the whole time and the context's error when it was cancelled.
	slowEnded func(err error)
}

// Tool inputs and outputs. The jsonschema package infers each input schema
// from these types: a field without omitempty is required, and an object
// admits no other property.
type (
	echoArgs struct {
		Text string `json:"text" jsonschema:"the text to echo back"`
	}
	addArgs struct {
		A float64 `json:"a" jsonschema:"the first addend"`
		B float64 `json:"b" jsonschema:"the second addend"`
	}
	addOut struct {
		Sum float64 `json:"sum" jsonschema:"a + b"`
	}
	wordCountArgs struct {
		Text string `json:"text" jsonschema:"the text whose words are counted"`
	}
	wordCountOut struct {
		Words int `json:"words" jsonschema:"the number of words"`
	}
	slowArgs struct {
		Ms int `json:"ms" jsonschema:"how long to sleep, in milliseconds"`
	}
)

// newServer returns the example server with its tools, prompt and
// resource. h may be nil.
func newServer(h *hooks) *mcp.Server {
	if h == nil {
		h = &hooks{}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Version: Version}, nil)

	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text argument unchanged."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return textResult(in.Text), nil, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addArgs) (*mcp.CallToolResult, addOut, error) {
			sum := in.A + in.B
			return textResult(strconv.FormatFloat(sum, 'g', -1, 64)), addOut{Sum: sum}, nil
		})

	mcp.AddTool(s, &mcp.Tool{Name: "word_count", Description: "Counts the words (runs of non-space characters) of a text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in wordCountArgs) (*mcp.CallToolResult, wordCountOut, error) {
			n := len(strings.Fields(in.Text))
			return textResult(strconv.Itoa(n)), wordCountOut{Words: n}, nil
		})

	mcp.AddTool(s, &mcp.Tool{
		Name:        "slow",
		Description: "Sleeps for ms milliseconds (at most 10000), then says so. Stops at once when the call is cancelled.",
		InputSchema: slowSchema(),
	}, func(ctx context.Context, req *mcp.CallToolRequest, in slowArgs) (*mcp.CallToolResult, any, error) {
		t := time.NewTimer(time.Duration(in.Ms) * time.Millisecond)
		defer t.Stop()
		// With a progress token the call first says it has started
		// (progress 0 of ms): a client can tell the call is running here
		// before it cancels it, without guessing how long that takes.
		if token := req.Params.GetProgressToken(); token != nil {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token, Progress: 0, Total: float64(in.Ms), Message: "sleeping"})
		}
		select {
		case <-t.C:
			if h.slowEnded != nil {
				h.slowEnded(nil)
			}
			return textResult(fmt.Sprintf("slept %d ms", in.Ms)), nil, nil
		case <-ctx.Done():
			if h.slowEnded != nil {
				h.slowEnded(ctx.Err())
			}
			return nil, nil, ctx.Err()
		}
	})

	s.AddPrompt(&mcp.Prompt{
		Name:        "review",
		Description: "Asks for a careful review of a text.",
		Arguments:   []*mcp.PromptArgument{{Name: "text", Description: "the text to review", Required: true}},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		text, ok := req.Params.Arguments["text"]
		if !ok {
			return nil, errors.New(`missing argument "text"`)
		}
		return &mcp.GetPromptResult{
			Description: "A review request",
			Messages: []*mcp.PromptMessage{{
				Role:    "user",
				Content: &mcp.TextContent{Text: "Please review this text carefully and list concrete improvements:\n\n" + text},
			}},
		}, nil
	})

	s.AddResource(&mcp.Resource{
		URI:         ReadmeURI,
		Name:        "readme",
		Description: "What this server offers.",
		MIMEType:    "text/plain",
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
			{URI: ReadmeURI, MIMEType: "text/plain", Text: readme},
		}}, nil
	})
	return s
}

// slowSchema is slow's input schema: the inferred one, with ms bounded to
// 0..MaxSlowMillis.
func slowSchema() *jsonschema.Schema {
	s, err := jsonschema.For[slowArgs](nil)
	if err != nil {
		panic(err) // a static type: cannot fail at run time
	}
	lo, hi := 0.0, float64(MaxSlowMillis)
	s.Properties["ms"].Minimum = &lo
	s.Properties["ms"].Maximum = &hi
	return s
}

// textResult is a tool result holding one text content.
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
