// A classic controller-runtime operator for DynamoPoolRelays: the benchmark's peer of the
// serverless product. It watches one namespace (--namespace) through the manager's informers,
// reconciles each DynamoPoolRelay with its same-named DynamoGraphDeployment into the same six
// children and the same status as the product, and on SIGTERM prints one JSON line to stdout with
// the API requests it sent ({"requests":N,"byVerb":{...},...}) and exits 0.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		namespace        = flag.String("namespace", "", "watch only this namespace (empty: all namespaces)")
		metricsAddr      = flag.String("metrics-bind-address", "0", "metrics endpoint address; 0 turns it off")
		probeAddr        = flag.String("health-probe-bind-address", "0", "health probe address; 0 turns it off")
		workers          = flag.Int("max-concurrent-reconciles", 4, "DynamoPoolRelays reconciled at once")
		qps              = flag.Float64("kube-api-qps", -1, "client-side QPS limit; -1 (controller-runtime v0.24's default) turns client-side rate limiting off and leaves it to API priority and fairness")
		burst            = flag.Int("kube-api-burst", 0, "client-side burst; used only with a --kube-api-qps of 0 or more (client-go's default 10 when 0)")
		syncPeriod       = flag.Duration("sync-period", 10*time.Minute, "informer resync: every DynamoPoolRelay reconciled again this often (the product's full resync is 10 ticks of 60 s)")
		dgdAPIVersion    = flag.String("dgd-api-version", "nvidia.com/v1beta1", "DynamoGraphDeployment version to watch")
		discoveryBackend = flag.String("default-discovery-backend", "kubernetes", "the Dynamo operator's discovery backend (kubernetes or etcd)")
		relayCommand     = flag.String("relay-command", "", `the Relay container's command as a JSON array (default ["python3","-m","dynamo.kv_dc_relay"])`)
	)
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts), zap.WriteTo(os.Stderr)))
	log := ctrl.Log.WithName("classic")

	settings := Settings{DiscoveryBackend: *discoveryBackend, RelayCommand: defaultRelayCommand}
	if *relayCommand != "" {
		var cmd []string
		if err := json.Unmarshal([]byte(*relayCommand), &cmd); err != nil || len(cmd) == 0 {
			fmt.Fprintf(os.Stderr, "--relay-command must be a non-empty JSON array of strings: %v\n", err)
			return 2
		}
		settings.RelayCommand = cmd
	}
	if *discoveryBackend != "kubernetes" && *discoveryBackend != "etcd" {
		fmt.Fprintln(os.Stderr, "--default-discovery-backend must be kubernetes or etcd")
		return 2
	}
	dgdGV, err := schema.ParseGroupVersion(*dgdAPIVersion)
	if err != nil {
		fmt.Fprintf(os.Stderr, "--dgd-api-version: %v\n", err)
		return 2
	}

	// --kubeconfig is controller-runtime's own flag (registered by its config package): that file,
	// else KUBECONFIG, in-cluster, ~/.kube/config.
	cfg, err := ctrl.GetConfig()
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubeconfig: %v\n", err)
		return 1
	}
	cfg.QPS, cfg.Burst = float32(*qps), *burst
	cfg.UserAgent = "dynamo-pool-relay-classic"
	counter := newRequestCounter()
	cfg.Wrap(counter.wrap)

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cacheOpts := cache.Options{SyncPeriod: syncPeriod, DefaultTransform: cache.TransformStripManagedFields()}
	if *namespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{*namespace: {}}
	}
	// Under the burst a reconcile may still wait on the API server when the bench stops it (bench/classic.ts kills after 30 s).
	shutdown := 20 * time.Second
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOpts,
		Client:                  client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Metrics:                 metricsserver.Options{BindAddress: *metricsAddr},
		HealthProbeBindAddress:  *probeAddr,
		LeaderElection:          false,
		GracefulShutdownTimeout: &shutdown,
	})
	if err != nil {
		log.Error(err, "creating the manager")
		return 1
	}
	r := &Reconciler{Client: mgr.GetClient(), Settings: settings, DGDGVK: dgdGV.WithKind("DynamoGraphDeployment")}
	ctx := ctrl.SetupSignalHandler()
	if err := r.SetupWithManager(ctx, mgr, *workers); err != nil {
		log.Error(err, "setting up the controller")
		return 1
	}
	log.Info("starting", "namespace", *namespace, "workers", *workers, "qps", *qps, "burst", *burst)
	code := 0
	if err := mgr.Start(ctx); err != nil {
		log.Error(err, "the manager stopped")
		code = 1
	}
	printReport(counter, r)
	return code
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func printReport(counter *requestCounter, r *Reconciler) {
	rep := counter.snapshot()
	rep.Reconciles, rep.Conflicts = r.Reconciles.Load(), r.Conflicts.Load()
	rep.ChildApplies, rep.Deletes, rep.StatusWrites = r.ChildApplies.Load(), r.Deletes.Load(), r.StatusWrites.Load()
	rep.CPUSeconds = cpuSeconds()
	line, _ := json.Marshal(rep)
	fmt.Fprintln(os.Stdout, string(line))
}
