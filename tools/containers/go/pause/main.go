// pause is the process of a pod's sandbox container: it holds the pod's namespaces open for the
// pod's other containers, reaps any orphaned process re-parented to it (it is PID 1 of the pod
// when the PID namespace is shared), and exits on SIGINT or SIGTERM. The kind node image built
// here uses it as containerd's sandbox_image, where registry.k8s.io/pause cannot be pulled.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "pause: warning: not PID 1")
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		switch sig {
		case syscall.SIGCHLD:
			reap()
		default:
			fmt.Fprintf(os.Stderr, "pause: shutting down on %v\n", sig)
			os.Exit(0)
		}
	}
}

// reap collects every child that has exited, so none stays a zombie.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
