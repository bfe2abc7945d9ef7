//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package iostreams

import "os"

// isTerminal is false where the CLI cannot ask: plain output.
func isTerminal(*os.File) bool { return false }

func terminalWidth(*os.File) int { return 0 }
