// Command diagserver is the stdio MCP server composition's failure and
// diagnostics tests run as a real child process. It speaks newline-framed
// JSON-RPC by hand (standard library only), so it can also break the
// protocol on purpose. It is built by the tests; it is not installed.
//
// -mode selects a behaviour:
//
//	serve        a working server (the default): initialize with -version,
//	             tools/list lists echo, crash and flood; tools/call echo
//	             answers its "text"; crash exits with status 5; flood
//	             writes "n" logging and "n" tools/list_changed
//	             notifications, then answers
//	env-exit     print every environment entry and then every argv
//	             element to stderr, one per line, and exit with -code
//	             before reading anything
//	endless      answer nothing: after reading initialize, write one
//	             stdout line that never ends
//	garbage      answer initialize with a line that is not JSON
//	notrpc       answer initialize with JSON that is not JSON-RPC
//	badversion   a working server that negotiates -version (set it to an
//	             unsupported one)
//	signal       kill itself with SIGKILL after reading initialize
//	closeout     close stdout after reading initialize, then keep running
//	             until stdin closes
//	silent       read everything and answer nothing
//
// In every mode -stderr TEXT is written to stderr (with a newline) first,
// and -marker PATH gets a line "start" appended (to count spawns).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"syscall"
)

type request struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

var out = bufio.NewWriter(os.Stdout)

func send(v any) {
	b, _ := json.Marshal(v)
	out.Write(b)
	out.WriteByte('\n')
	out.Flush()
}

func reply(id json.RawMessage, result any) {
	send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func main() {
	mode := flag.String("mode", "serve", "behaviour")
	code := flag.Int("code", 3, "exit status of env-exit")
	version := flag.String("version", "2025-11-25", "negotiated protocol version")
	stderr := flag.String("stderr", "", "text written to stderr first")
	marker := flag.String("marker", "", "file to append a start line to")
	flag.Parse()
	if *marker != "" {
		if f, err := os.OpenFile(*marker, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			f.WriteString("start\n")
			f.Close()
		}
	}
	if *stderr != "" {
		fmt.Fprintln(os.Stderr, *stderr)
	}
	if *mode == "env-exit" {
		env := os.Environ()
		sort.Strings(env)
		for _, e := range env {
			fmt.Fprintln(os.Stderr, e)
		}
		for _, a := range os.Args {
			fmt.Fprintln(os.Stderr, a)
		}
		os.Exit(*code)
	}

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			continue
		}
		if req.Method == "initialize" {
			switch *mode {
			case "endless", "endless-json":
				if *mode == "endless-json" {
					os.Stdout.WriteString(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"protocolVersion":"`)
				}
				chunk := []byte(strings.Repeat("x", 64<<10))
				for {
					if _, err := os.Stdout.Write(chunk); err != nil {
						os.Exit(0)
					}
				}
			case "garbage":
				os.Stdout.WriteString("this is not json\n")
				continue
			case "notrpc":
				os.Stdout.WriteString(`{"hello":"world"}` + "\n")
				continue
			case "signal":
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			case "silent":
				continue
			case "closeout":
				os.Stdout.Close()
				for in.Scan() {
				}
				return
			}
			reply(req.ID, map[string]any{
				"protocolVersion": *version,
				"capabilities":    map[string]any{"tools": map[string]any{}},
				"serverInfo":      map[string]any{"name": "diagserver", "version": "1"},
			})
			continue
		}
		if len(req.ID) == 0 {
			continue // a notification
		}
		switch req.Method {
		case "tools/list":
			obj := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}
			reply(req.ID, map[string]any{"tools": []any{
				map[string]any{"name": "echo", "inputSchema": obj},
				map[string]any{"name": "crash", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "flood", "inputSchema": map[string]any{"type": "object"}},
			}})
		case "tools/call":
			var p struct {
				Name      string `json:"name"`
				Arguments struct {
					Text string `json:"text"`
					N    int    `json:"n"`
				} `json:"arguments"`
			}
			_ = json.Unmarshal(req.Params, &p)
			if p.Name == "flood" {
				for range p.Arguments.N {
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "x"}})
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
				}
			}
			if p.Name == "crash" {
				fmt.Fprintln(os.Stderr, "crashing on purpose")
				os.Exit(5)
			}
			reply(req.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": p.Arguments.Text}}})
		case "ping":
			reply(req.ID, map[string]any{})
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		}
	}
}
