{{/* Names and labels. */}}
{{- define "sluice.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "sluice.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "sluice.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "sluice.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* (dict "root" $ "component" "receiver") */}}
{{- define "sluice.selectorLabels" -}}
app.kubernetes.io/name: {{ include "sluice.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "sluice.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "sluice.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "sluice.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Which roles run, per mode. */}}
{{- define "sluice.split" -}}{{- if eq .Values.mode "split" -}}true{{- end -}}{{- end -}}
{{- define "sluice.querierActive" -}}
{{- if or (eq .Values.mode "single") .Values.querier.enabled -}}true{{- end -}}
{{- end -}}

{{/*
sluice.pick: (list $src "camelKey:snake_key ...") → a JSON object of the listed keys that are set in $src
(neither null nor ""), renamed to their snake_case file keys. Only listed keys are ever rendered: the file schema
is strict, and an unknown key would be a startup error.
*/}}
{{- define "sluice.pick" -}}
{{- $src := index . 0 | default dict -}}
{{- $out := dict -}}
{{- range $pair := splitList " " (index . 1) -}}
{{- $p := splitList ":" $pair -}}
{{- $v := index $src (first $p) -}}
{{- if and (not (kindIs "invalid" $v)) (ne (toString $v) "") -}}
{{- $_ := set $out (last $p) $v -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/*
sluice.config: (dict "root" $ "role" "receiver"|"querier"|"compactor"|"single") → the role's configuration file
(the snake_case keys of docs/configuration.md). Each file enables only its role(s) and states the other roles' `enabled: false`
explicitly (compaction.enabled defaults to true in the binary).
*/}}
{{- define "sluice.config" -}}
{{- $v := .root.Values -}}
{{- $role := .role -}}
{{- $rx := or (eq $role "receiver") (eq $role "single") -}}
{{- $qx := or (eq $role "querier") (eq $role "single") -}}
{{- $cx := or (eq $role "compactor") (and (eq $role "single") $v.single.compaction) -}}
{{- $host := $v.listenHost -}}
{{- if contains ":" $host -}}{{- $host = printf "[%s]" $host -}}{{- end -}}

{{- $storage := dict "backend" $v.storage.backend -}}
{{- if eq $v.storage.backend "local" -}}
{{- $local := include "sluice.pick" (list $v.storage.local "requestTimeoutMs:request_timeout_ms") | fromJson -}}
{{- $_ := set $storage "local" (merge (dict "root" $v.storage.local.root) $local) -}}
{{- else -}}
{{- $s3 := include "sluice.pick" (list $v.storage.s3 "bucket:bucket endpoint:endpoint region:region prefix:prefix forcePathStyle:force_path_style connectTimeoutMs:connect_timeout_ms requestTimeoutMs:request_timeout_ms maxAttempts:max_attempts retryBaseMs:retry_base_ms retryMaxMs:retry_max_ms") | fromJson -}}
{{- if $v.storage.s3.existingSecret -}}
{{- $_ := set $s3 "access_key_id" (printf "${env:%s}" $v.storage.s3.accessKeyIdEnv) -}}
{{- $_ := set $s3 "secret_access_key" (printf "${env:%s}" $v.storage.s3.secretAccessKeyEnv) -}}
{{- end -}}
{{- $_ := set $storage "s3" $s3 -}}
{{- end -}}

{{- $receiver := dict "enabled" $rx -}}
{{- if $rx -}}
{{- $r := $v.receiver -}}
{{- $_ := set $receiver "grpc_addr" (printf "%s:%d" $host (int $r.grpcPort)) -}}
{{- $_ := set $receiver "http_addr" (printf "%s:%d" $host (int $r.httpPort)) -}}
{{- $rconn := include "sluice.pick" (list $r "maxHttpConnections:max_http_connections maxGrpcConnections:max_grpc_connections") | fromJson -}}
{{- $receiver = merge $receiver $rconn -}}
{{- $_ := set $receiver "wal_dir" $r.walDir -}}
{{- $wal := include "sluice.pick" (list $r.wal "groupCommitMs:group_commit_ms segmentBytes:segment_bytes maxBacklogBytes:max_backlog_bytes fenceRetryMs:fence_retry_ms") | fromJson -}}
{{- if $wal }}{{ $_ := set $receiver "wal" $wal }}{{ end -}}
{{- $sink := include "sluice.pick" (list $r.sink "flushAgeSecs:flush_age_secs flushIntervalMs:flush_interval_ms flushBytes:flush_bytes ceilingBytes:ceiling_bytes") | fromJson -}}
{{- if $sink }}{{ $_ := set $receiver "sink" $sink }}{{ end -}}
{{- $lim := include "sluice.pick" (list $r.limits "maxRequestBytes:max_request_bytes maxDecompressedBytes:max_decompressed_bytes maxInflightBytes:max_inflight_bytes minFreeDiskPercent:min_free_disk_percent") | fromJson -}}
{{- if $lim }}{{ $_ := set $receiver "limits" $lim }}{{ end -}}
{{- $miner := include "sluice.pick" (list $r.miner "similarityThreshold:similarity_threshold prefixDepth:prefix_depth maxNodeChildren:max_node_children paramByteLimit:param_byte_limit maxTemplatesPerTenant:max_templates_per_tenant maxLineTokens:max_line_tokens") | fromJson -}}
{{- if $miner }}{{ $_ := set $receiver "miner" $miner }}{{ end -}}
{{- end -}}

{{- $querier := dict "enabled" $qx -}}
{{- if $qx -}}
{{- $q := $v.querier -}}
{{- $_ := set $querier "http_addr" (printf "%s:%d" $host (int $q.port)) -}}
{{- $top := include "sluice.pick" (list $q "defaultWindowSecs:default_window_secs maxConnections:max_connections onCorruptObject:on_corrupt_object") | fromJson -}}
{{- $querier = merge $querier $top -}}
{{- $mcp := include "sluice.pick" (list $q.mcp "enabled:enabled") | fromJson -}}
{{- if $mcp }}{{ $_ := set $querier "mcp" $mcp }}{{ end -}}
{{- $ui := include "sluice.pick" (list $q.ui "enabled:enabled") | fromJson -}}
{{- if $ui }}{{ $_ := set $querier "ui" $ui }}{{ end -}}
{{- $loki := include "sluice.pick" (list $q.loki "enabled:enabled tenantHeader:tenant_header sampleRows:sample_rows") | fromJson -}}
{{- if $loki }}{{ $_ := set $querier "loki" $loki }}{{ end -}}
{{- $ql := include "sluice.pick" (list $q.limits "memoryPoolBytes:memory_pool_bytes memoryPoolFraction:memory_pool_fraction maxConcurrentQueries:max_concurrent_queries queryParallelism:query_parallelism maxQueuedQueries:max_queued_queries queueTimeoutMs:queue_timeout_ms queryTimeoutMs:query_timeout_ms maxConcurrentQueriesPerTenant:max_concurrent_queries_per_tenant maxQueryMemoryBytes:max_query_memory_bytes lightQueryPermits:light_query_permits lightQueryMs:light_query_ms lightQueryMemoryBytes:light_query_memory_bytes maxLiveTails:max_live_tails maxTailSecs:max_tail_secs maxTailBufferBytes:max_tail_buffer_bytes tailPollMs:tail_poll_ms maxListedObjects:max_listed_objects maxFiles:max_files defaultRows:default_rows maxRows:max_rows maxResultBytes:max_result_bytes footerCacheBytes:footer_cache_bytes maxOpenFiles:max_open_files enforcement:enforcement") | fromJson -}}
{{- if $ql }}{{ $_ := set $querier "limits" $ql }}{{ end -}}
{{- end -}}

{{- $compaction := dict "enabled" $cx -}}
{{- if $cx -}}
{{- $c := include "sluice.pick" (list $v.compactor "intervalSecs:interval_secs graceSecs:grace_secs openHourMinFileAgeSecs:open_hour_min_file_age_secs memoryBudgetBytes:memory_budget_bytes") | fromJson -}}
{{- $compaction = merge $compaction $c -}}
{{- end -}}

{{- $cfg := dict "version" 1 "storage" $storage "receiver" $receiver "querier" $querier "compaction" $compaction -}}
{{- $server := include "sluice.pick" (list $v.server "shutdownTimeoutSecs:shutdown_timeout_secs") | fromJson -}}
{{- if $server }}{{ $_ := set $cfg "server" $server }}{{ end -}}
{{- $tenancy := include "sluice.pick" (list $v.tenancy "header:header defaultTenant:default_tenant") | fromJson -}}
{{- if $tenancy }}{{ $_ := set $cfg "tenancy" $tenancy }}{{ end -}}
{{- /* auth only where a listener runs: the compactor opens no port and mounts no token Secret. */ -}}
{{- if and $v.auth.enabled (or $rx $qx) -}}
{{- $auth := dict "enabled" true "tokens_file" (printf "%s/%s" $v.auth.mountPath $v.auth.key) -}}
{{- $am := include "sluice.pick" (list $v.auth "protectMetrics:protect_metrics") | fromJson -}}
{{- $_ := set $cfg "auth" (merge $auth $am) -}}
{{- end -}}
{{- $telemetry := include "sluice.pick" (list $v.telemetry "otlpEndpoint:otlp_endpoint prometheus:prometheus serviceName:service_name") | fromJson -}}
{{- if $telemetry }}{{ $_ := set $cfg "telemetry" $telemetry }}{{ end -}}
# Sluice configuration for the {{ $role }} role, rendered by the Helm chart {{ .root.Chart.Name }}-{{ .root.Chart.Version }}.
# The documented config keys (docs/configuration.md); strict schema (an unknown key is a startup error). Secrets are ${env:...} references.
{{ toYaml $cfg }}
{{- end -}}

{{/*
sluice.memBytes: a Kubernetes memory quantity ("2Gi", "1500M", 2147483648) → bytes as a decimal string, or ""
when unset. Fails on a quantity it cannot read, rather than guessing.
*/}}
{{- define "sluice.memBytes" -}}
{{- if not (kindIs "invalid" .) -}}
{{- $q := "" -}}
{{- if or (kindIs "float64" .) (kindIs "int64" .) (kindIs "int" .) -}}
{{- $q = printf "%.0f" (float64 .) -}}
{{- else -}}
{{- $q = toString . | trim -}}
{{- end -}}
{{- $num := regexFind "^[0-9]+(\\.[0-9]+)?" $q -}}
{{- $suffix := trimPrefix $num $q -}}
{{- $units := dict "" 1 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 -}}
{{- if or (eq $num "") (not (hasKey $units $suffix)) -}}
{{- fail (printf "sluice: cannot read the memory quantity %q (use e.g. 512Mi, 2Gi or a byte count)" $q) -}}
{{- end -}}
{{- printf "%.0f" (mulf (float64 $num) (index $units $suffix)) -}}
{{- end -}}
{{- end -}}

{{/*
sluice.env: (dict "root" $ "resources" <resources> ["heapPercent" <int>] "roleEnv" <list>) → the container env.
NODE_OPTIONS --max-old-space-size = max(heap.minMb, heapPercent × resources.limits.memory) when a limit is set and
heapPercent is given. Querier processes pass no heapPercent: on Node 20 the process-wide flag overrides the query
workers' resourceLimits (derived from the pool) and would cap them below what the pool admits.
Then the S3 credentials (secretKeyRef), the global extraEnv and the role's extraEnv (a later duplicate wins).
*/}}
{{- define "sluice.env" -}}
{{- $v := .root.Values -}}
{{- $limits := (.resources | default dict).limits | default dict -}}
{{- $bytes := include "sluice.memBytes" (index $limits "memory") -}}
{{- if and $bytes (not (kindIs "invalid" .heapPercent)) }}
- name: NODE_OPTIONS
  value: {{ printf "--max-old-space-size=%d" (max (int64 $v.heap.minMb) (div (mul (int64 $bytes) (int64 .heapPercent)) 104857600)) | quote }}
{{- end }}
{{- if and (eq $v.storage.backend "s3") $v.storage.s3.existingSecret }}
- name: {{ $v.storage.s3.accessKeyIdEnv }}
  valueFrom:
    secretKeyRef:
      name: {{ $v.storage.s3.existingSecret }}
      key: {{ $v.storage.s3.accessKeyIdKey }}
- name: {{ $v.storage.s3.secretAccessKeyEnv }}
  valueFrom:
    secretKeyRef:
      name: {{ $v.storage.s3.existingSecret }}
      key: {{ $v.storage.s3.secretAccessKeyKey }}
{{- end }}
{{- with $v.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- with .roleEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The checksum/config annotation of a role: changes exactly when that role's file changes. */}}
{{- define "sluice.checksum" -}}
{{- include "sluice.config" . | sha256sum -}}
{{- end -}}

{{/* Volumes every pod has: its config file (as sluice.yaml) and /tmp. (dict "root" $ "role" ...) */}}
{{- define "sluice.commonVolumes" -}}
- name: config
  configMap:
    name: {{ include "sluice.fullname" .root }}-config
    items:
      - key: {{ .role }}.yaml
        path: sluice.yaml
- name: tmp
  emptyDir:
    {{- with .root.Values.tmp.sizeLimit }}
    sizeLimit: {{ . }}
    {{- end }}
{{- end -}}

{{/* The token Secret of a pod that opens a listener (auth.enabled); nothing otherwise. (root context) */}}
{{- define "sluice.authVolume" -}}
{{- if .Values.auth.enabled }}
- name: auth-tokens
  secret:
    secretName: {{ .Values.auth.existingSecret }}
    items:
      - key: {{ .Values.auth.key }}
        path: {{ .Values.auth.key }}
{{- end }}
{{- end -}}

{{- define "sluice.authMount" -}}
{{- if .Values.auth.enabled }}
- name: auth-tokens
  mountPath: {{ .Values.auth.mountPath }}
  readOnly: true
{{- end }}
{{- end -}}

{{- define "sluice.commonMounts" -}}
- name: config
  mountPath: {{ .Values.configMountPath }}
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- end -}}

{{/* Does a shared data PVC "<fullname>-data" exist (split mode, local backend, persistence, no existingClaim)? */}}
{{- define "sluice.sharedDataClaim" -}}
{{- $l := .Values.storage.local -}}
{{- if and (eq .Values.mode "split") (eq .Values.storage.backend "local") $l.persistence.enabled -}}
{{- default (printf "%s-data" (include "sluice.fullname" .)) $l.persistence.existingClaim -}}
{{- else if and (eq .Values.storage.backend "local") $l.persistence.enabled $l.persistence.existingClaim -}}
{{- $l.persistence.existingClaim -}}
{{- end -}}
{{- end -}}

{{/* The data volume of a split-mode pod with the local backend (a claim, else an emptyDir). */}}
{{- define "sluice.dataVolume" -}}
{{- if eq .Values.storage.backend "local" }}
{{- $claim := include "sluice.sharedDataClaim" . }}
- name: data
{{- if $claim }}
  persistentVolumeClaim:
    claimName: {{ $claim }}
{{- else }}
  emptyDir: {}
{{- end }}
{{- end }}
{{- end -}}

{{- define "sluice.dataMount" -}}
{{- if eq .Values.storage.backend "local" }}
- name: data
  mountPath: {{ .Values.storage.local.root }}
{{- end }}
{{- end -}}

{{/* Validation that must stop a render. */}}
{{- define "sluice.validate" -}}
{{- $v := .Values -}}
{{- if not (has $v.mode (list "split" "single")) -}}
{{- fail (printf "sluice: mode must be split or single, not %q" $v.mode) -}}
{{- end -}}
{{- if not (has $v.storage.backend (list "local" "s3")) -}}
{{- fail (printf "sluice: storage.backend must be local or s3, not %q" $v.storage.backend) -}}
{{- end -}}
{{- if and $v.auth.enabled (not $v.auth.existingSecret) -}}
{{- fail "sluice: auth.enabled needs auth.existingSecret: a Secret holding the token document (see docs/security.md)" -}}
{{- end -}}
{{- if and (not $v.auth.enabled) $v.auth.existingSecret -}}
{{- fail "sluice: auth.existingSecret is set but auth.enabled is false: set auth.enabled=true, or the gateway runs without authentication" -}}
{{- end -}}
{{- if and (eq $v.storage.backend "s3") (not $v.storage.s3.bucket) -}}
{{- fail "sluice: storage.backend s3 needs storage.s3.bucket" -}}
{{- end -}}
{{- if and (eq $v.mode "split") (not (or $v.receiver.enabled $v.querier.enabled $v.compactor.enabled)) -}}
{{- fail "sluice: mode split with receiver, querier and compactor all disabled renders nothing" -}}
{{- end -}}
{{- $qEnv := concat ($v.extraEnv | default list) (ternary ($v.single.extraEnv | default list) ($v.querier.extraEnv | default list) (eq $v.mode "single")) -}}
{{- if include "sluice.querierActive" . -}}
{{- range $qEnv -}}
{{- if and (eq .name "NODE_OPTIONS") (contains "max-old-space-size" (toString .value)) -}}
{{- fail "sluice: NODE_OPTIONS --max-old-space-size must not reach the querier process: on Node 20 it overrides the query workers' pool-derived heap limits (remove it from extraEnv / querier.extraEnv / single.extraEnv)" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $ql := $v.querier.limits -}}
{{- if and (not (kindIs "invalid" $ql.defaultRows)) (not (kindIs "invalid" $ql.maxRows)) -}}
{{- if gt (int64 $ql.defaultRows) (int64 $ql.maxRows) -}}
{{- fail "sluice: querier.limits.defaultRows must be <= querier.limits.maxRows" -}}
{{- end -}}
{{- end -}}
{{- end -}}
