// The testbed's cluster DNS: CoreDNS with only the plugins the testbed uses (bind, ready, health, errors,
// kubernetes), built from its Go module at the version go.mod pins. The real node's pods and OLM's processes on the
// host resolve <service>.<namespace>.svc names through it; it forwards nothing.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

// In the order of CoreDNS's own plugin.cfg: a server block runs its plugins in this order.
var directives = []string{"bind", "ready", "health", "errors", "kubernetes"}

func init() {
	dnsserver.Directives = directives
}

func main() {
	coremain.Run()
}
