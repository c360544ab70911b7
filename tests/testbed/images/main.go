// The programs of the testbed's container images, as one static multi-call binary (standard library only): each
// image holds it under the name of the program it runs, and that name picks the program.
//
//	pause  the pod sandbox (the role of Kubernetes' pause image) and the "good" workload: waits for SIGTERM or
//	       SIGINT and reaps the children orphaned into its PID namespace meanwhile
//	crash  a crash-looping container: says so on stderr and exits 1 at once
package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

func main() {
	switch name := filepath.Base(os.Args[0]); name {
	case "pause":
		pause()
	case "crash":
		fmt.Fprintln(os.Stderr, "kubeforge testbed: this container crashes on purpose")
		os.Exit(1)
	default:
		fmt.Fprintf(os.Stderr, "unknown program %q: install this binary as pause or crash\n", name)
		os.Exit(2)
	}
}

func pause() {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			return
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
