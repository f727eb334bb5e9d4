/**
 * The lifecycle kwok plays for simulated nodes and pods, as kwok Stage objects.
 *
 * - nodes become Ready at once and keep heartbeating;
 * - pods go straight to Running and Ready, with an IP from kwok's CIDR;
 * - pods whose image lives under `invalid.opkit.test/` stay Pending in ImagePullBackOff, so
 *   operators can be tested against a Deployment that cannot progress;
 * - pods being deleted are removed (there is no kubelet to confirm termination).
 */
export const INVALID_IMAGE_PREFIX = 'invalid.opkit.test/';

const badImage = `[.spec.containers.[].image | startswith("${INVALID_IMAGE_PREFIX}")] | any`;

export const KWOK_STAGES = `
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: opkit-node-ready
spec:
  resourceRef: { apiGroup: v1, kind: Node }
  selector:
    matchExpressions:
      - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
        operator: NotIn
        values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range NodeConditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}
      addresses:
      - { address: {{ NodeIP | Quote }}, type: InternalIP }
      - { address: {{ NodeName | Quote }}, type: Hostname }
      allocatable:
      {{ YAML .status.allocatable 1 }}
      capacity:
      {{ YAML .status.capacity 1 }}
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: opkit-node-heartbeat
spec:
  resourceRef: { apiGroup: v1, kind: Node }
  selector:
    matchExpressions:
      - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
        operator: In
        values: ['True']
  delay:
    durationMilliseconds: 20000
    jitterDurationMilliseconds: 25000
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range .status.conditions }}
      - lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ .lastTransitionTime | Quote }}
        message: {{ .message | Quote }}
        reason: {{ .reason | Quote }}
        status: {{ .status | Quote }}
        type: {{ .type | Quote }}
      {{ end }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: opkit-pod-ready
spec:
  resourceRef: { apiGroup: v1, kind: Pod }
  selector:
    matchExpressions:
      - key: .metadata.deletionTimestamp
        operator: DoesNotExist
      - key: .status.phase
        operator: In
        values: ['Pending']
      - key: '${badImage}'
        operator: NotIn
        values: ['true']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - { lastTransitionTime: {{ $now | Quote }}, status: "True", type: Initialized }
      - { lastTransitionTime: {{ $now | Quote }}, status: "True", type: PodScheduled }
      - { lastTransitionTime: {{ $now | Quote }}, status: "True", type: ContainersReady }
      - { lastTransitionTime: {{ $now | Quote }}, status: "True", type: Ready }
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: true
        started: true
        restartCount: 0
        state: { running: { startedAt: {{ $now | Quote }} } }
      {{ end }}
      {{ with NodeIPsWith .spec.nodeName }}
      hostIP: {{ index . 0 | Quote }}
      {{ end }}
      {{ with PodIPsWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) }}
      podIP: {{ index . 0 | Quote }}
      podIPs:
      {{ range . }}
      - ip: {{ . | Quote }}
      {{ end }}
      {{ end }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: opkit-pod-image-pull-failure
spec:
  resourceRef: { apiGroup: v1, kind: Pod }
  selector:
    matchExpressions:
      - key: .metadata.deletionTimestamp
        operator: DoesNotExist
      - key: .status.containerStatuses
        operator: DoesNotExist
      - key: '${badImage}'
        operator: In
        values: ['true']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - { lastTransitionTime: {{ $now | Quote }}, status: "True", type: PodScheduled }
      - { lastTransitionTime: {{ $now | Quote }}, status: "False", type: Ready, reason: ContainersNotReady }
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        state:
          waiting:
            reason: ImagePullBackOff
            message: {{ printf "Back-off pulling image %q" .image | Quote }}
      {{ end }}
      phase: Pending
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: opkit-pod-delete
spec:
  resourceRef: { apiGroup: v1, kind: Pod }
  selector:
    matchExpressions:
      - key: .metadata.deletionTimestamp
        operator: Exists
  next:
    delete: true
`;
