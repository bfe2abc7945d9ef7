// Command listfloor is the floor of the peer benchmark's stdio listing: a
// client that does no work of its own. It starts benchserver (-server)
// with -readyfile, sends initialize and then tools/list page after page,
// each as one line, and of each answer only finds "nextCursor" in the raw
// line; nothing is decoded. It prints, per round, the time from the
// server's readiness to the last page (the "listing from ready" of
// bench-peers for a client that costs nothing) and the wall time from the
// spawn, so the part of a client's listing that is the server's own is
// known.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"
)

func main() {
	server := flag.String("server", "", "the benchserver binary")
	rounds := flag.Int("rounds", 5, "listings, each with a fresh server")
	flag.Parse()
	for i := range *rounds {
		fromReady, wall, pages, err := list(*server)
		if err != nil {
			fmt.Fprintln(os.Stderr, "listfloor:", err)
			os.Exit(1)
		}
		fmt.Printf("round %d: %d pages, from ready %s, wall %s\n", i+1, pages, fromReady.Round(time.Millisecond/10), wall.Round(time.Millisecond/10))
	}
}

// list runs one listing against a fresh server.
func list(server string) (fromReady, wall time.Duration, pages int, err error) {
	dir, err := os.MkdirTemp("", "listfloor-")
	if err != nil {
		return 0, 0, 0, err
	}
	defer os.RemoveAll(dir)
	readyFile := dir + "/ready"
	cmd := exec.Command(server, "-readyfile", readyFile)
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, 0, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		_ = in.Close()
		if werr := cmd.Wait(); err == nil && werr != nil {
			err = werr
		}
	}()
	out := bufio.NewReaderSize(outPipe, 1<<20)
	send := func(line string) error { _, err := io.WriteString(in, line+"\n"); return err }
	if err := send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"listfloor","version":"1"}}}`); err != nil {
		return 0, 0, 0, err
	}
	if _, err := out.ReadSlice('\n'); err != nil {
		return 0, 0, 0, err
	}
	if err := send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return 0, 0, 0, err
	}
	marker := []byte(`"nextCursor":"`)
	cursor := ""
	for id := 1; ; id++ {
		params := "{}"
		if cursor != "" {
			params = `{"cursor":` + strconv.Quote(cursor) + `}`
		}
		if err := send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/list","params":` + params + `}`); err != nil {
			return 0, 0, 0, err
		}
		line, err := readLine(out)
		if err != nil {
			return 0, 0, 0, err
		}
		pages++
		k := bytes.Index(line, marker)
		if k < 0 {
			break
		}
		rest := line[k+len(marker):]
		e := bytes.IndexByte(rest, '"')
		if e < 0 {
			return 0, 0, 0, errors.New("a cursor without its end")
		}
		cursor = string(rest[:e])
	}
	end := time.Now()
	b, err := os.ReadFile(readyFile)
	if err != nil {
		return 0, 0, 0, err
	}
	ready, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, 0, 0, err
	}
	return time.Duration(end.UnixNano() - max(ready, start.UnixNano())), end.Sub(start), pages, nil
}

// readLine reads one line of any length.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := r.ReadSlice('\n')
		line = append(line, part...)
		if err == nil {
			return line, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}
