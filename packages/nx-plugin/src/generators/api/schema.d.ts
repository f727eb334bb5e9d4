export interface ApiGeneratorSchema {
  operator: string;
  kind: string;
  group?: string;
  apiVersion?: string;
  plural?: string;
  namespaced?: boolean;
  scale?: boolean;
  skipTasks?: boolean;
}
