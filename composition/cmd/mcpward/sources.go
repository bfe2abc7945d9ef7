package main

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// maxSourceBytes is the largest configuration file mcpward reads; a larger
// file is unreadable.
const maxSourceBytes = 4 << 20

// sourceStatus says what became of one configuration file.
type sourceStatus string

const (
	// statusRead: the file was read (its content may still be malformed).
	statusRead sourceStatus = "read"
	// statusAbsent: a default location holds no file; it is not a source.
	statusAbsent sourceStatus = "absent"
	// statusUnreadable: the file exists (or was named by a flag) but could
	// not be read.
	statusUnreadable sourceStatus = "unreadable"
)

// source is one configuration file mcpward looked at.
type source struct {
	tier ports.Tier
	// path is absolute; it is the source's origin.
	path string
	// fromFlag is true when a flag named the file.
	fromFlag bool
	status   sourceStatus
	// src is the source handed to the library; unset when absent.
	src definition.Source
}

// errUnreadable is a source's ReadErr. The library keeps only its presence.
var errUnreadable = errors.New("unreadable")

// locate lists the configuration files of o, highest tier first: each
// flag's files, or the tier's default location when its flag is not given.
// Plugins have no default location.
func locate(o options, e env) []source {
	var out []source
	add := func(tier ports.Tier, path string, fromFlag bool) {
		if !filepath.IsAbs(path) {
			path = filepath.Join(e.cwd, path)
		}
		out = append(out, source{tier: tier, path: filepath.Clean(path), fromFlag: fromFlag})
	}
	if len(o.managed) > 0 {
		for _, p := range o.managed {
			add(ports.TierManaged, p, true)
		}
	} else if e.managedPath != "" {
		add(ports.TierManaged, e.managedPath, false)
	}
	one := func(tier ports.Tier, f pathFlag, def string) {
		switch {
		case f.set:
			add(tier, f.path, true)
		case def != "":
			add(tier, def, false)
		}
	}
	one(ports.TierLocal, o.local, filepath.Join(".mcpward", "local.json"))
	one(ports.TierProject, o.project, ".mcp.json")
	one(ports.TierUser, o.user, userConfigPath(e))
	for _, p := range o.plugins {
		add(ports.TierPlugin, p, true)
	}
	return out
}

// userConfigPath is the default user configuration file, "" when neither
// XDG_CONFIG_HOME nor HOME is set.
func userConfigPath(e env) string {
	if d, ok := e.lookup("XDG_CONFIG_HOME"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, "mcpward", "mcp.json")
	}
	if h, ok := e.lookup("HOME"); ok && filepath.IsAbs(h) {
		return filepath.Join(h, ".config", "mcpward", "mcp.json")
	}
	return ""
}

// defaultStateDir is the default state directory, "" when neither
// XDG_STATE_HOME nor HOME is set.
func defaultStateDir(e env) string {
	if d, ok := e.lookup("XDG_STATE_HOME"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, "mcpward")
	}
	if h, ok := e.lookup("HOME"); ok && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "mcpward")
	}
	return ""
}

// load reads every located file. A missing file at a default location is
// absent; every other failure makes the source unreadable.
func load(located []source) []source {
	out := make([]source, len(located))
	for i, s := range located {
		s.src = definition.Source{Tier: s.tier, Origin: s.path}
		data, err := readSource(s.path)
		switch {
		case err == nil:
			s.status, s.src.Data = statusRead, data
		case errors.Is(err, fs.ErrNotExist) && !s.fromFlag:
			s.status = statusAbsent
		default:
			s.status, s.src.ReadErr = statusUnreadable, errUnreadable
		}
		out[i] = s
	}
	return out
}

// readSource reads one regular file of at most maxSourceBytes.
func readSource(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errUnreadable
	}
	data, err := io.ReadAll(io.LimitReader(f, maxSourceBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSourceBytes {
		return nil, errUnreadable
	}
	return data, nil
}

// librarySources returns the sources to hand to the library: every source
// that is not absent.
func librarySources(srcs []source) []definition.Source {
	var out []definition.Source
	for _, s := range srcs {
		if s.status != statusAbsent {
			out = append(out, s.src)
		}
	}
	return out
}
