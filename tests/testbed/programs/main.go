// The testbed's own small programs, as one static multi-call binary (standard library only); the name it runs under
// picks the program. The real node's images hold it under the name of the program they run.
//
//	pause  the pod sandbox (the role of Kubernetes' pause image) and the "good" workload: waits for SIGTERM or
//	       SIGINT and reaps the children orphaned into its PID namespace meanwhile
//	crash  a crash-looping container: says so on stderr and exits 1 at once
//	cp     [-R] [-v] SOURCE... TARGET: copies files (and with -R directories), keeping their modes; OLM's util
//	       image runs it to hand its copy-content and cpb programs to other containers
//	relay  LISTEN TARGET: forwards every TCP connection to LISTEN on to TARGET (the real node's pods reach the API
//	       server, which listens on 127.0.0.1 only, through it)
package main

import (
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	name := filepath.Base(os.Args[0])
	if strings.HasPrefix(name, "testbed-programs") && len(os.Args) > 1 { // the binary itself: the program comes first
		name, os.Args = os.Args[1], os.Args[1:]
	}
	switch name {
	case "cp":
		if err := copyCommand(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "cp:", err)
			os.Exit(1)
		}
	case "relay":
		if len(os.Args) != 3 {
			fmt.Fprintln(os.Stderr, "usage: relay LISTEN_ADDRESS TARGET_ADDRESS")
			os.Exit(2)
		}
		relay(os.Args[1], os.Args[2])
	case "pause":
		pause()
	case "crash":
		fmt.Fprintln(os.Stderr, "kubeforge testbed: this container crashes on purpose")
		os.Exit(1)
	default:
		fmt.Fprintf(os.Stderr, "unknown program %q: run this binary as pause, crash, cp or relay\n", name)
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

func relay(listen, target string) {
	listener, err := net.Listen("tcp", listen)
	if err != nil {
		log.Fatalf("relay: %v", err)
	}
	log.Printf("relay: %s -> %s", listen, target)
	for {
		conn, err := listener.Accept()
		if err != nil {
			log.Fatalf("relay: accept: %v", err)
		}
		go forward(conn, target)
	}
}

func forward(client net.Conn, target string) {
	defer client.Close()
	server, err := net.Dial("tcp", target)
	if err != nil {
		log.Printf("relay: %s: %v", target, err)
		return
	}
	defer server.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if tcp, ok := dst.(*net.TCPConn); ok {
			tcp.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done
	<-done
}

func copyCommand(args []string) error {
	recursive, verbose := false, false
	for len(args) > 0 && strings.HasPrefix(args[0], "-") && len(args[0]) > 1 {
		for _, flag := range args[0][1:] {
			switch flag {
			case 'R', 'r':
				recursive = true
			case 'v':
				verbose = true
			default:
				return fmt.Errorf("unknown option -%c", flag)
			}
		}
		args = args[1:]
	}
	if len(args) < 2 {
		return fmt.Errorf("usage: cp [-R] [-v] SOURCE... TARGET")
	}
	sources, target := args[:len(args)-1], args[len(args)-1]
	info, err := os.Stat(target)
	intoDir := err == nil && info.IsDir()
	if len(sources) > 1 && !intoDir {
		return fmt.Errorf("target %s is not a directory", target)
	}
	for _, source := range sources {
		dest := target
		if intoDir {
			dest = filepath.Join(target, filepath.Base(source))
		}
		if err := copyPath(source, dest, recursive, verbose); err != nil {
			return err
		}
	}
	return nil
}

func copyPath(source, dest string, recursive, verbose bool) error {
	info, err := os.Stat(source)
	if err != nil {
		return err
	}
	if info.IsDir() {
		if !recursive {
			return fmt.Errorf("%s is a directory (not copied without -R)", source)
		}
		if err := os.MkdirAll(dest, info.Mode().Perm()); err != nil {
			return err
		}
		entries, err := os.ReadDir(source)
		if err != nil {
			return err
		}
		for _, entry := range entries {
			if err := copyPath(filepath.Join(source, entry.Name()), filepath.Join(dest, entry.Name()), recursive, verbose); err != nil {
				return err
			}
		}
		return nil
	}
	in, err := os.Open(source)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, info.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if verbose {
		fmt.Printf("'%s' -> '%s'\n", source, dest)
	}
	return os.Chmod(dest, info.Mode().Perm())
}
