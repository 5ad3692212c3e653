//go:build tools

// The upstream Knative commands built from this module, unmodified: Eventing's, which the local
// control plane runs as host processes (its data plane) or the real node as pods, and Serving's.
package tools

import (
	_ "knative.dev/eventing/cmd/apiserver_receive_adapter"
	_ "knative.dev/eventing/cmd/broker/filter"
	_ "knative.dev/eventing/cmd/broker/ingress"
	_ "knative.dev/eventing/cmd/controller"
	_ "knative.dev/eventing/cmd/in_memory/channel_controller"
	_ "knative.dev/eventing/cmd/in_memory/channel_dispatcher"
	_ "knative.dev/eventing/cmd/mtchannel_broker"
	_ "knative.dev/eventing/cmd/mtping"
	_ "knative.dev/eventing/cmd/webhook"
	_ "knative.dev/serving/cmd/activator"
	_ "knative.dev/serving/cmd/autoscaler"
	_ "knative.dev/serving/cmd/controller"
	_ "knative.dev/serving/cmd/queue"
	_ "knative.dev/serving/cmd/webhook"
)
