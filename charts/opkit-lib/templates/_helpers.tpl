{{/* Names and labels */}}
{{- define "opkit-lib.v1.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "opkit-lib.v1.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "opkit-lib.v1.selectorLabels" -}}
app.kubernetes.io/name: {{ include "opkit-lib.v1.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "opkit-lib.v1.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "opkit-lib.v1.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: opkit
{{- /* commonLabels, then global.commonLabels; never the labels above, which selectors rely on. */}}
{{- $common := merge (dict) (.Values.commonLabels | default dict) ((.Values.global).commonLabels | default dict) }}
{{- with omit $common "helm.sh/chart" "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/version" "app.kubernetes.io/managed-by" "app.kubernetes.io/part-of" }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The metadata.annotations block of an object: commonAnnotations and the object's own ("extra", a
dict). Renders nothing when there are none. Call with (dict "ctx" $ "extra" (dict …)).
*/}}
{{- define "opkit-lib.v1.annotations" -}}
{{- $all := merge (dict) (.extra | default dict) (.ctx.Values.commonAnnotations | default dict) }}
{{- with $all }}
annotations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "opkit-lib.v1.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "opkit-lib.v1.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
An image reference from an image's values (registry, repository, tag, digest): the digest when
set (pulled by content, not by a movable tag), the registry or global.imageRegistry prepended.
Call with (dict "ctx" $ "image" .Values.someImage).
*/}}
{{- define "opkit-lib.v1.imageRef" -}}
{{- $registry := default ((.ctx.Values.global).imageRegistry | default "") (.image.registry | default "") }}
{{- $repository := .image.repository }}
{{- if $registry }}{{ $repository = printf "%s/%s" (trimSuffix "/" $registry) $repository }}{{ end }}
{{- if .image.digest }}
{{- printf "%s@%s" $repository .image.digest }}
{{- else }}
{{- printf "%s:%s" $repository (default .ctx.Chart.AppVersion .image.tag) }}
{{- end }}
{{- end }}

{{- define "opkit-lib.v1.image" -}}
{{- include "opkit-lib.v1.imageRef" (dict "ctx" . "image" .Values.image) }}
{{- end }}

{{/* imagePullSecrets and global.imagePullSecrets, once each. */}}
{{- define "opkit-lib.v1.imagePullSecrets" -}}
{{- $all := concat (.Values.imagePullSecrets | default list) ((.Values.global).imagePullSecrets | default list) | uniq }}
{{- with $all }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "opkit-lib.v1.leaderElectionNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.namespace }}
{{- end }}

{{/* "true" when the chart has sharding values and they are on; "" otherwise (only some charts have them). */}}
{{- define "opkit-lib.v1.sharded" -}}
{{- if (.Values.sharding | default dict).enabled }}true{{ end }}
{{- end }}

{{/* The shard ring's name: its Leases are <ring>-coordinator, <ring>-shards and <ring>-member-<pod>. */}}
{{- define "opkit-lib.v1.shardRing" -}}
{{- include "opkit-lib.v1.name" . }}
{{- end }}

{{- define "opkit-lib.v1.leaseName" -}}
{{- printf "%s-leader" (include "opkit-lib.v1.name" .) }}
{{- end }}

{{/* Fails rendering on combinations that cannot work, with a message saying why. */}}
{{- define "opkit-lib.v1.validate" -}}
{{- $sharded := include "opkit-lib.v1.sharded" . }}
{{- if and $sharded .Values.leaderElection.enabled }}
{{- fail "sharding.enabled runs every replica on its part of the objects: set leaderElection.enabled=false (they are alternatives)" }}
{{- end }}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) (not $sharded) }}
{{- fail "replicaCount > 1 needs leaderElection.enabled=true (or sharding.enabled, where the chart has it): replicas would reconcile the same objects at once" }}
{{- end }}
{{- if and .Values.webhook.hostNetwork (eq (int .Values.webhook.port) 10250) }}
{{- fail "webhook.hostNetwork with webhook.port 10250: that is the kubelet's port on every node; choose a free host port (e.g. 10260)" }}
{{- end }}
{{- end }}

{{/* ServiceAccount */}}
{{- define "opkit-lib.v1.serviceAccount" -}}
{{- if .Values.serviceAccount.create }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "opkit-lib.v1.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" . "extra" .Values.serviceAccount.annotations) | nindent 2 }}
automountServiceAccountToken: true
{{- end }}
{{- end }}

{{/*
RBAC: exactly the rules the controllers declare (the chart's "<chart>.rules" template, generated
from code). Cluster-wide by default; with watchNamespaces, a Role and RoleBinding in each watched
namespace, plus a ClusterRole for cluster-scoped kinds the operator reads (its "<chart>.clusterRules"
template, when it has one).
*/}}
{{- define "opkit-lib.v1.rbac" -}}
{{- if .Values.rbac.create }}
{{- $fullname := include "opkit-lib.v1.fullname" . }}
{{- $rules := include (printf "%s.rules" .Chart.Name) . }}
{{- if not .Values.watchNamespaces }}
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
rules:
  {{- $rules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $fullname }}
subjects:
  - kind: ServiceAccount
    name: {{ include "opkit-lib.v1.serviceAccountName" . }}
    namespace: {{ .Release.Namespace }}
{{- else }}
{{- range $ns := .Values.watchNamespaces }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ $fullname }}
  namespace: {{ $ns }}
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $) | nindent 2 }}
rules:
  {{- include (printf "%s.namespacedRules" $.Chart.Name) $ | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ $fullname }}
  namespace: {{ $ns }}
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $) | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ $fullname }}
subjects:
  - kind: ServiceAccount
    name: {{ include "opkit-lib.v1.serviceAccountName" $ }}
    namespace: {{ $.Release.Namespace }}
{{- end }}
{{- $clusterRules := include (printf "%s.clusterRules" .Chart.Name) . | trim }}
{{- if $clusterRules }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $fullname }}-cluster
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
rules:
  {{- $clusterRules | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $fullname }}-cluster
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $fullname }}-cluster
subjects:
  - kind: ServiceAccount
    name: {{ include "opkit-lib.v1.serviceAccountName" . }}
    namespace: {{ .Release.Namespace }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The leader-election Lease, made by the release rather than by the operator: `helm uninstall`
removes it with everything else. The operator only writes its holder fields; helm's three-way
merge leaves those alone on upgrade.
*/}}
{{- define "opkit-lib.v1.leaderElectionLease" -}}
{{- /* Sharded too: after a switch from leader election the old leader, while it stops, could make it again, and nobody would remove it. */}}
{{- if or .Values.leaderElection.enabled (include "opkit-lib.v1.sharded" .) }}
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: {{ include "opkit-lib.v1.leaseName" . }}
  namespace: {{ include "opkit-lib.v1.leaderElectionNamespace" . }}
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
{{- end }}
{{- end }}

{{/*
The shard ring's two shared Leases (who coordinates, and the assignment), made by the release so
that `helm uninstall` removes them; the operator writes their holder fields and the assignment
annotation, which helm's three-way merge leaves alone on upgrade. Each replica's own Lease is
deleted when it leaves, or by the coordinator once it expired.
*/}}
{{- define "opkit-lib.v1.shardingLeases" -}}
{{- if include "opkit-lib.v1.sharded" . }}
{{- range $suffix := list "coordinator" "shards" }}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: {{ include "opkit-lib.v1.shardRing" $ }}-{{ $suffix }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $) | nindent 2 }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The shard ring's Role: Leases in the release namespace. Not by name: each replica makes its own
(named for its pod), deletes it when it leaves, and the coordinator lists them all and deletes
those that expired.
*/}}
{{- define "opkit-lib.v1.shardingRbac" -}}
{{- if and .Values.rbac.create (include "opkit-lib.v1.sharded" .) }}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "opkit-lib.v1.fullname" . }}-sharding
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
rules:
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    verbs: ["get", "list", "create", "update", "delete"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "opkit-lib.v1.fullname" . }}-sharding
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "opkit-lib.v1.fullname" . }}-sharding
subjects:
  - kind: ServiceAccount
    name: {{ include "opkit-lib.v1.serviceAccountName" . }}
    namespace: {{ .Release.Namespace }}
{{- end }}
{{- end }}

{{/* The leader-election Role: this operator's Lease only, in the leader-election namespace. */}}
{{- define "opkit-lib.v1.leaderElectionRbac" -}}
{{- if and .Values.rbac.create .Values.leaderElection.enabled }}
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: {{ include "opkit-lib.v1.fullname" . }}-leader-election
  namespace: {{ include "opkit-lib.v1.leaderElectionNamespace" . }}
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
rules:
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    resourceNames: [{{ include "opkit-lib.v1.leaseName" . | quote }}]
    verbs: ["get", "update", "patch"]
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    verbs: ["create"]
  - apiGroups: [""]
    resources: ["events"]
    verbs: ["create", "patch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: {{ include "opkit-lib.v1.fullname" . }}-leader-election
  namespace: {{ include "opkit-lib.v1.leaderElectionNamespace" . }}
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: {{ include "opkit-lib.v1.fullname" . }}-leader-election
subjects:
  - kind: ServiceAccount
    name: {{ include "opkit-lib.v1.serviceAccountName" . }}
    namespace: {{ .Release.Namespace }}
{{- end }}
{{- end }}

{{/*
The operator's Deployment. Pass "extraArgs" (a list) and "extraEnv" (a list of EnvVar) for the
operator's own flags and settings, and "webhooks" true when the operator serves webhooks.
*/}}
{{- define "opkit-lib.v1.deployment" -}}
{{- $ := .ctx }}
{{- include "opkit-lib.v1.validate" $ }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "opkit-lib.v1.fullname" $ }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $) | nindent 2 }}
spec:
  replicas: {{ $.Values.replicaCount }}
  revisionHistoryLimit: 3
  selector:
    matchLabels:
      {{- include "opkit-lib.v1.selectorLabels" $ | nindent 6 }}
  strategy:
    {{- toYaml (default (dict "type" "RollingUpdate") $.Values.strategy) | nindent 4 }}
  template:
    metadata:
      labels:
        {{- include "opkit-lib.v1.selectorLabels" $ | nindent 8 }}
        {{- with $.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        kubectl.kubernetes.io/default-container: manager
        {{- with $.Values.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "opkit-lib.v1.serviceAccountName" $ }}
      {{- include "opkit-lib.v1.imagePullSecrets" $ | nindent 6 }}
      {{- with $.Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      securityContext:
        {{- toYaml $.Values.podSecurityContext | nindent 8 }}
      {{- if and .webhooks $.Values.webhook.hostNetwork }}
      # webhook.hostNetwork: the API server reaches the webhooks on the node's address.
      hostNetwork: true
      dnsPolicy: ClusterFirstWithHostNet
      {{- end }}
      # SIGTERM drains in-flight reconciles (up to 30 s) and releases the lease.
      terminationGracePeriodSeconds: 40
      containers:
        - name: manager
          image: {{ include "opkit-lib.v1.image" $ | quote }}
          imagePullPolicy: {{ $.Values.image.pullPolicy }}
          args:
            - --metrics-bind-address={{ if $.Values.metrics.enabled }}:{{ $.Values.metrics.port }}{{ else }}0{{ end }}
            {{- if and $.Values.metrics.enabled $.Values.metrics.secure }}
            - --metrics-secure
            {{- end }}
            - --health-probe-bind-address=:{{ $.Values.probes.port }}
            {{- if .webhooks }}
            {{- include "opkit-lib.v1.webhookArgs" $ | nindent 12 }}
            {{- end }}
            - --log-level={{ $.Values.logLevel }}
            - --log-format={{ $.Values.logFormat }}
            - --log-time-encoding={{ $.Values.logTimeEncoding }}
            - --log-level-encoding={{ $.Values.logLevelEncoding }}
            {{- if $.Values.leaderElection.enabled }}
            - --leader-elect
            - --leader-election-namespace={{ include "opkit-lib.v1.leaderElectionNamespace" $ }}
            - --leader-election-id={{ include "opkit-lib.v1.leaseName" $ }}
            {{- end }}
            {{- if include "opkit-lib.v1.sharded" $ }}
            - --shard
            - --shard-namespace={{ $.Release.Namespace }}
            - --shard-ring={{ include "opkit-lib.v1.shardRing" $ }}
            {{- end }}
            {{- range .extraArgs }}
            - {{ . | quote }}
            {{- end }}
            {{- range $.Values.extraArgs }}
            - {{ . | quote }}
            {{- end }}
          env:
            - name: POD_NAME
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            # With POD_NAME, the leader-election identity: stable across container restarts.
            - name: POD_UID
              valueFrom:
                fieldRef:
                  fieldPath: metadata.uid
            - name: POD_NAMESPACE
              valueFrom:
                fieldRef:
                  fieldPath: metadata.namespace
            - name: WATCH_NAMESPACE
              value: {{ join "," $.Values.watchNamespaces | quote }}
            {{- with .extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- with $.Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          ports:
            - name: metrics
              containerPort: {{ $.Values.metrics.port }}
              protocol: TCP
            - name: probes
              containerPort: {{ $.Values.probes.port }}
              protocol: TCP
            {{- if .webhooks }}
            - name: webhook
              containerPort: {{ $.Values.webhook.port }}
              protocol: TCP
            {{- end }}
          livenessProbe:
            httpGet:
              path: /healthz
              port: probes
            {{- toYaml $.Values.probes.liveness | nindent 12 }}
          readinessProbe:
            httpGet:
              path: /readyz
              port: probes
            {{- toYaml $.Values.probes.readiness | nindent 12 }}
          resources:
            {{- toYaml $.Values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $.Values.securityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        # The root filesystem is read-only; a small scratch directory for anything that insists.
        - name: tmp
          emptyDir:
            sizeLimit: 16Mi
      {{- with $.Values.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $.Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $.Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $.Values.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- tpl (toYaml .) $ | nindent 8 }}
      {{- end }}
{{- end }}

{{/* The metrics Service (Prometheus scrapes it directly or through the ServiceMonitor). */}}
{{- define "opkit-lib.v1.metricsService" -}}
{{- if .Values.metrics.enabled }}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "opkit-lib.v1.fullname" . }}-metrics
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
spec:
  type: ClusterIP
  selector:
    {{- include "opkit-lib.v1.selectorLabels" . | nindent 4 }}
  ports:
    - name: metrics
      port: {{ .Values.metrics.port }}
      targetPort: metrics
      protocol: TCP
{{- end }}
{{- end }}

{{/* A ServiceMonitor, only where the Prometheus operator's API exists (or when forced). */}}
{{- define "opkit-lib.v1.serviceMonitor" -}}
{{- $sm := .Values.metrics.serviceMonitor }}
{{- if and .Values.metrics.enabled $sm.enabled }}
{{- if or (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor") $sm.force }}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "opkit-lib.v1.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
    {{- with $sm.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "opkit-lib.v1.selectorLabels" . | nindent 6 }}
  endpoints:
    - port: metrics
      path: /metrics
      interval: {{ $sm.interval }}
      {{- if .Values.metrics.secure }}
      # HTTPS with a self-signed certificate (as kubebuilder's scaffold); Prometheus authenticates
      # with its ServiceAccount token, which needs the "<fullname>-metrics-reader" ClusterRole.
      scheme: https
      bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
      tlsConfig:
        insecureSkipVerify: true
      {{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
A PodDisruptionBudget, only with more than one replica: over a single pod it would block every
node drain, and a standby replica is what lets a drain go on while another leads.
*/}}
{{- define "opkit-lib.v1.podDisruptionBudget" -}}
{{- $pdb := .Values.podDisruptionBudget }}
{{- if and $pdb.enabled (gt (int .Values.replicaCount) 1) }}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "opkit-lib.v1.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" . | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" .) | nindent 2 }}
spec:
  selector:
    matchLabels:
      {{- include "opkit-lib.v1.selectorLabels" . | nindent 6 }}
  {{- if hasKey $pdb "maxUnavailable" }}
  maxUnavailable: {{ $pdb.maxUnavailable }}
  {{- else }}
  minAvailable: {{ $pdb.minAvailable | default 1 }}
  {{- end }}
{{- end }}
{{- end }}

{{/*
The operator's NetworkPolicy (off by default). Ingress: the metrics port (from metricsFrom, or
anywhere) and the probe port (the kubelet). Egress: DNS, the API server, and the operator's own
("egress": rules as YAML, e.g. the cert operator's ACME servers). Call with
(dict "ctx" $ "egress" "<yaml list>" "webhooks" bool): the webhook port is open to all (the API server's
address is not known to the chart).
*/}}
{{- define "opkit-lib.v1.networkPolicy" -}}
{{- $ := .ctx }}
{{- $np := $.Values.networkPolicy }}
{{- if $np.enabled }}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "opkit-lib.v1.fullname" $ }}
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $) | nindent 2 }}
spec:
  podSelector:
    matchLabels:
      {{- include "opkit-lib.v1.selectorLabels" $ | nindent 6 }}
  policyTypes: [Ingress, Egress]
  ingress:
    - ports:
        - port: metrics
          protocol: TCP
      {{- with $np.metricsFrom }}
      from:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    - ports:
        - port: probes
          protocol: TCP
    {{- if .webhooks }}
    # The API server calls the webhooks; its address is not known to the chart.
    - ports:
        - port: webhook
          protocol: TCP
    {{- end }}
    {{- with $np.extraIngress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  egress:
    # DNS, wherever the cluster's resolver runs.
    - ports:
        - port: 53
          protocol: UDP
        - port: 53
          protocol: TCP
    # The API server: the kubernetes Service's port and the apiserver's own (what NetworkPolicy
    # sees after the Service is resolved); its address is not known to the chart.
    - ports:
        {{- range $np.apiServerPorts }}
        - port: {{ . }}
          protocol: TCP
        {{- end }}
    {{- with .egress }}
    {{- . | nindent 4 }}
    {{- end }}
    {{- with $np.extraEgress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end }}
{{- end }}

{{/*
The `helm test` Pod: from the operator's own image (its Node), it asks the metrics Service for
/metrics and expects the runtime's metrics there, and any the chart names ("metrics", a list).
Restricted-PSS like the operator. Call with (dict "ctx" $ "metrics" (list …)).
*/}}
{{- define "opkit-lib.v1.testPod" -}}
{{- $ := .ctx }}
{{- if and $.Values.tests.enabled $.Values.metrics.enabled }}
{{- $expected := concat (list "controller_runtime_reconcile_total") (.metrics | default list) }}
{{- $fullname := include "opkit-lib.v1.fullname" $ }}
{{- $secure := $.Values.metrics.secure }}
{{- $hook := dict "helm.sh/hook" "test" "helm.sh/hook-delete-policy" "before-hook-creation,hook-succeeded" }}
{{- if $secure }}
# The test's own identity, bound to the metrics reader role: what a Prometheus ServiceAccount gets.
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $fullname }}-test-metrics
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $ "extra" (merge (dict "helm.sh/hook-weight" "-10") $hook)) | nindent 2 }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $fullname }}-test-metrics
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $ "extra" (merge (dict "helm.sh/hook-weight" "-10") $hook)) | nindent 2 }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $fullname }}-metrics-reader
subjects:
  - kind: ServiceAccount
    name: {{ $fullname }}-test-metrics
    namespace: {{ $.Release.Namespace }}
---
{{- end }}
apiVersion: v1
kind: Pod
metadata:
  name: {{ $fullname }}-test-metrics
  namespace: {{ $.Release.Namespace }}
  labels:
    {{- include "opkit-lib.v1.labels" $ | nindent 4 }}
  {{- include "opkit-lib.v1.annotations" (dict "ctx" $ "extra" $hook) | nindent 2 }}
spec:
  restartPolicy: Never
  {{- if $secure }}
  serviceAccountName: {{ $fullname }}-test-metrics
  automountServiceAccountToken: true
  {{- else }}
  serviceAccountName: {{ include "opkit-lib.v1.serviceAccountName" $ }}
  automountServiceAccountToken: false
  {{- end }}
  {{- include "opkit-lib.v1.imagePullSecrets" $ | nindent 2 }}
  securityContext:
    {{- toYaml $.Values.podSecurityContext | nindent 4 }}
  containers:
    - name: metrics
      image: {{ include "opkit-lib.v1.image" $ | quote }}
      imagePullPolicy: {{ $.Values.image.pullPolicy }}
      # The image's Node (distroless layout, as the official base), running a script instead of the operator.
      command:
        - /nodejs/bin/node
        - -e
        - |
          const url = '{{ ternary "https" "http" $secure }}://{{ $fullname }}-metrics.{{ $.Release.Namespace }}.svc:{{ $.Values.metrics.port }}/metrics';
          const expected = {{ toJson $expected }};
          const get = (token) => new Promise((resolve, reject) => {
            const headers = token ? { authorization: `Bearer ${token}` } : {};
            // The operator's certificate is self-signed, as Prometheus' scrape config assumes (insecureSkipVerify).
            const req = require(url.split(':')[0]).get(url, { headers, rejectUnauthorized: false, timeout: 10000 }, (res) => {
              let body = '';
              res.on('data', (d) => (body += d));
              res.on('end', () => resolve({ status: res.statusCode, body }));
            });
            req.on('timeout', () => req.destroy(new Error(`${url}: timed out`)));
            req.on('error', reject);
          });
          (async () => {
            {{- if $secure }}
            const anonymous = await get();
            if (anonymous.status !== 401) throw new Error(`${url} without a token: HTTP ${anonymous.status}, expected 401`);
            const token = require('fs').readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/token', 'utf8').trim();
            const r = await get(token);
            {{- else }}
            const r = await get();
            {{- end }}
            if (r.status !== 200) throw new Error(`${url}: HTTP ${r.status}: ${r.body}`);
            const missing = expected.filter((m) => !r.body.includes(`# TYPE ${m} `));
            if (missing.length) throw new Error(`${url}: missing ${missing.join(', ')}`);
            console.log(`${url}: ok (${expected.join(', ')}){{ if $secure }}; 401 without a token{{ end }}`);
          })().catch((e) => { console.error(e.message); process.exit(1); });
      resources:
        requests:
          cpu: 10m
          memory: 32Mi
        limits:
          memory: 128Mi
      securityContext:
        {{- toYaml $.Values.securityContext | nindent 8 }}
{{- end }}
{{- end }}
