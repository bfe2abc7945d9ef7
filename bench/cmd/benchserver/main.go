// Command benchserver is the MCP server every client of the peer
// benchmark talks to: a go-sdk server with an "echo" tool and -tools more
// tools (tool_00000, …) served in pages of 100. It speaks stdio by
// default; with -http it serves Streamable HTTP on that loopback address,
// prints its endpoint URL on one line of stdout, and stops when stdin
// closes. With -readyfile, a stdio server writes the wall-clock time
// (Unix nanoseconds, decimal) at which it has built its tools and starts
// reading stdin to that file, so a client can time its listing without
// the server's own start.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpward/mcpward/bench/internal/fixture"
)

func main() {
	tools := flag.Int("tools", fixture.Tools, "tools besides echo")
	addr := flag.String("http", "", "serve Streamable HTTP on this loopback address (e.g. 127.0.0.1:0) instead of stdio")
	jsonResponse := flag.Bool("json", false, "http: answer POSTs with application/json instead of an SSE stream")
	stateless := flag.Bool("stateless", false, "http: stateless Streamable HTTP (the go-sdk serves the 2026-07-28 era only so)")
	readyFile := flag.String("readyfile", "", "stdio: write the time (Unix ns) the server starts reading stdin to this file")
	flag.Parse()
	srv := fixture.Server(*tools)
	if *addr == "" {
		if *readyFile != "" {
			if err := os.WriteFile(*readyFile, strconv.AppendInt(nil, time.Now().UnixNano(), 10), 0o600); err != nil {
				log.Fatal(err)
			}
		}
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil && err != io.EOF {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if host, _, _ := net.SplitHostPort(ln.Addr().String()); !net.ParseIP(host).IsLoopback() {
		log.Fatal("benchserver serves loopback only")
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	go func() { // the harness closes stdin to stop the server
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: *jsonResponse, Stateless: *stateless})
	log.Fatal(http.Serve(ln, h))
}
