// cert-manager's controller, built here from cert-manager's Go module at a pinned version, for the
// tests and benches that run it beside opkit's cert operator: the CA-issuance comparison
// (bench/compare/certificates) and the coexistence test (both operators on one API server).
// cert-manager's own command (cmd/controller) is a module of its own that the Go module proxy does
// not serve, so this main wires the same library the way that command does: a controller context
// factory, the controllers asked for with --controllers (registered by their packages' init),
// their informers started, each loop run with cert-manager's default worker count. No webhook, no
// cainjector; ACME's controllers when asked for (orders, challenges, certificaterequests-issuer-acme).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// The controllers and issuers a CA (and SelfSigned) issuance uses; each registers itself.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificate-shim/ingresses"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"

	// ACME (HTTP-01 and DNS-01): asked for with --controllers, for the takeover with Orders in flight.
	_ "github.com/cert-manager/cert-manager/pkg/controller/acmechallenges"
	_ "github.com/cert-manager/cert-manager/pkg/controller/acmeorders"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/acme"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/acme"
)

// What a CA issuance needs; ingress-shim is there to be asked for.
var caIssuance = strings.Join([]string{
	"issuers", "clusterissuers",
	"certificates-trigger", "certificates-issuing", "certificates-key-manager", "certificates-request-manager", "certificates-readiness", "certificates-revision-manager",
	"certificaterequests-approver", "certificaterequests-issuer-ca", "certificaterequests-issuer-selfsigned",
}, ",")

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	namespace := flag.String("namespace", "", "namespace to watch (empty: all)")
	clusterResourceNamespace := flag.String("cluster-resource-namespace", "cert-manager", "where ClusterIssuers' Secrets live")
	workers := flag.Int("concurrent-workers", 5, "workers per controller (cert-manager's default is 5)")
	controllers := flag.String("controllers", caIssuance, "the controllers to run, by cert-manager's names (ingress-shim among them)")
	solverImage := flag.String("acme-http01-solver-image", "quay.io/jetstack/cert-manager-acmesolver:v1.21.2", "the HTTP-01 solver pods' image (cert-manager's flag)")
	solverNameservers := flag.String("acme-http01-solver-nameservers", "", "host:port resolvers for the HTTP-01 self-check, comma-separated (cert-manager's flag)")
	flag.Parse()
	var nameservers []string
	if *solverNameservers != "" {
		nameservers = strings.Split(*solverNameservers, ",")
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	ctx = logf.NewContext(ctx, logf.Log)

	factory, err := controllerpkg.NewContextFactory(ctx, controllerpkg.ContextOptions{
		Kubeconfig: *kubeconfig,
		Namespace:  *namespace,
		// As cert-manager's defaults; the API server's priority and fairness (on here) turns the
		// client-side limit off altogether, as for opkit.
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions:      controllerpkg.IssuerOptions{ClusterResourceNamespace: *clusterResourceNamespace},
		// cert-manager's default for --auto-certificate-annotations.
		IngressShimOptions: controllerpkg.IngressShimOptions{DefaultAutoCertificateAnnotations: []string{"kubernetes.io/tls-acme"}},
		// cert-manager's default for --max-concurrent-challenges (0 would schedule none).
		SchedulerOptions: controllerpkg.SchedulerOptions{MaxConcurrentChallenges: 60},
		// cert-manager's defaults for its ACME flags.
		ACMEOptions: controllerpkg.ACMEOptions{
			HTTP01SolverImage:                 *solverImage,
			HTTP01SolverResourceRequestCPU:    resource.MustParse("10m"),
			HTTP01SolverResourceRequestMemory: resource.MustParse("64Mi"),
			HTTP01SolverResourceLimitsCPU:     resource.MustParse("100m"),
			HTTP01SolverResourceLimitsMemory:  resource.MustParse("64Mi"),
			ACMEHTTP01SolverRunAsNonRoot:      true,
			HTTP01SolverNameservers:           nameservers,
			DNS01CheckAuthoritative:           true,
			DNS01CheckRetryPeriod:             10 * time.Second,
		},
		CertificateOptions: controllerpkg.CertificateOptions{
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var loops []controllerpkg.Interface
	for _, name := range strings.Split(*controllers, ",") {
		construct, ok := controllerpkg.Known()[name]
		if !ok {
			fmt.Fprintf(os.Stderr, "controller %s is not registered\n", name)
			os.Exit(1)
		}
		loop, err := construct(factory)
		if err != nil {
			fmt.Fprintf(os.Stderr, "controller %s: %v\n", name, err)
			os.Exit(1)
		}
		loops = append(loops, loop)
	}
	// The informers the loops asked for, started once all have registered theirs.
	shared, err := factory.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	// The HTTP-01 solver's pods, services and ingresses, as metadata (the challenges controller's).
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	fmt.Fprintf(os.Stderr, "{\"msg\":\"starting %d controllers\"}\n", len(loops))
	done := make(chan struct{}, len(loops))
	for _, loop := range loops {
		go func(l controllerpkg.Interface) {
			if err := l.Run(*workers, ctx); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
			done <- struct{}{}
		}(loop)
	}
	for range loops {
		<-done
	}
}
