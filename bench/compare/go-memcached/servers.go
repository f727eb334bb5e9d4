package main

// The servers a scaffolded controller-runtime operator runs beside its controller, each off unless
// asked for, so that compare/idle-containers can set the Go comparator side by side with opkit's
// chart (HTTPS metrics behind TokenReview and SubjectAccessReview, health probes, leader election,
// a webhook server) and the other benches keep measuring the controller alone.

import (
	"context"
	"flag"
	"os"
	"path/filepath"

	certutil "k8s.io/client-go/util/cert"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

type serverFlags struct {
	metricsSecure  bool
	probeAddr      string
	leaderElect    bool
	leaderID       string
	webhookPort    int
	webhookCertDir string
}

func (s *serverFlags) register() {
	flag.BoolVar(&s.metricsSecure, "metrics-secure", false, "serve metrics over HTTPS, each request authenticated (TokenReview) and authorized (SubjectAccessReview)")
	flag.StringVar(&s.probeAddr, "health-probe-bind-address", "0", "healthz and readyz address (0: off)")
	flag.BoolVar(&s.leaderElect, "leader-elect", false, "elect a leader through a Lease in POD_NAMESPACE")
	flag.StringVar(&s.leaderID, "leader-election-id", "go-memcached", "the Lease's name")
	flag.IntVar(&s.webhookPort, "webhook-port", 0, "serve an admission webhook for Memcacheds on this port, with a self-signed certificate made at start (0: off)")
	flag.StringVar(&s.webhookCertDir, "webhook-cert-dir", "/tmp/webhook-certs", "where that certificate is written")
}

// apply sets the manager options the flags ask for.
func (s *serverFlags) apply(opts *ctrl.Options) error {
	if s.metricsSecure {
		opts.Metrics.SecureServing = true
		opts.Metrics.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	opts.HealthProbeBindAddress = s.probeAddr
	if s.leaderElect {
		opts.LeaderElection = true
		opts.LeaderElectionID = s.leaderID
		opts.LeaderElectionNamespace = os.Getenv("POD_NAMESPACE")
		opts.LeaderElectionReleaseOnCancel = true
	}
	if s.webhookPort != 0 {
		if err := selfSignedCertificate(s.webhookCertDir); err != nil {
			return err
		}
		opts.WebhookServer = webhook.NewServer(webhook.Options{Port: s.webhookPort, CertDir: s.webhookCertDir})
	}
	return nil
}

// start registers what the manager serves once it runs.
func (s *serverFlags) start(mgr ctrl.Manager) error {
	if s.probeAddr != "0" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			return err
		}
	}
	if s.webhookPort != 0 {
		// What a webhook server costs while it waits: the TLS server and one handler. opkit's
		// memcached operator serves its CRD's conversion there; this one serves an admission
		// handler that allows everything (a conversion needs both API versions' Go types, and idle
		// memory measures the server, not what its handler does).
		mgr.GetWebhookServer().Register("/validate-cache-opkit-dev-v1beta1-memcached", &webhook.Admission{
			Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response { return admission.Allowed("") }),
		})
		if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
			return err
		}
	}
	return nil
}

// selfSignedCertificate writes tls.crt and tls.key into dir (client-go's generator: a self-signed
// CA and a serving certificate for the name, as kube-apiserver makes for itself without flags).
func selfSignedCertificate(dir string) error {
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("go-memcached-webhook", nil, nil)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), certPEM, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "tls.key"), keyPEM, 0o600)
}
