// The import rules of docs/architecture.md: five tiers, each importing only downward, no cycle
// between folders, and no folder reaching into another folder's SQL (`*.repo.ts`).
//
// The tiers are data. A folder under src/ sits in one tier; a folder may import any folder of a
// lower tier, and only the folders of its own tier that it lists under `uses` (checked below to
// form no cycle, so no cycle between folders can arise). Route files (`*.routes.ts`) and `api/`
// are the edge tier wherever they sit.

const TIERS = [
  { tier: 'kernel', folders: { platform: [], kernel: ['platform'] } },
  {
    tier: 'model',
    folders: {
      events: [],
      notifications: [],
      audit: ['events'],
      realms: ['audit', 'events'],
      keys: ['audit', 'events'],
      mfa: ['realms', 'notifications'],
      'support-grants': ['events'],
      sessions: ['audit', 'events', 'realms', 'clients', 'support-grants'],
      users: ['audit', 'events', 'realms', 'sessions'],
      clients: ['audit', 'events', 'realms', 'keys'],
      resources: ['audit', 'events', 'realms', 'keys', 'clients'],
      roles: ['audit', 'events', 'realms', 'users'],
      jobs: ['audit', 'events', 'realms', 'users', 'roles'],
      organizations: ['audit', 'events', 'realms', 'users', 'sessions', 'roles', 'jobs', 'notifications', 'webhooks'],
      groups: ['audit', 'events', 'realms', 'roles', 'organizations'],
      projects: ['audit', 'events', 'realms', 'roles', 'organizations'],
      'service-principals': ['audit', 'events', 'realms', 'roles', 'clients', 'organizations'],
      relationships: ['audit', 'events', 'realms', 'roles'],
      webhooks: ['audit', 'events', 'realms', 'roles'],
      hooks: ['audit', 'events', 'realms', 'roles', 'webhooks'],
      'identity-providers': ['audit', 'events', 'realms', 'mfa', 'users', 'sessions', 'roles', 'organizations'],
      access: [
        'realms',
        'keys',
        'users',
        'sessions',
        'clients',
        'resources',
        'roles',
        'organizations',
        'support-grants',
      ],
    },
  },
  {
    tier: 'flows',
    folders: {
      ops: [],
      setup: [],
      emergency: [],
      federation: [],
      signin: ['emergency', 'federation'],
      oauth: ['signin', 'emergency'],
      'saml-idp': ['signin', 'oauth'],
      support: ['oauth'],
      decisions: [],
      configuration: [],
      exports: ['configuration'],
      imports: [],
      restore: [],
      scim: [],
      provisioning: ['scim'],
      reviews: [],
      bulk: [],
      workflows: ['bulk'],
      plugins: ['workflows'],
      recovery: [],
    },
  },
  { tier: 'edges', folders: { api: [] } },
  { tier: 'main', folders: { main: [] } },
];

const EDGE_FILE = '\\.routes\\.ts$';
const folderRe = (names) => `^src/(${names.map((n) => n.replace(/[-]/g, '\\-')).join('|')})/`;

function assertNoCycle() {
  for (const { folders } of TIERS) {
    const state = new Map();
    const visit = (f, trail) => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') throw new Error(`tier data: folders use each other: ${[...trail, f].join(' -> ')}`);
      state.set(f, 'open');
      for (const g of folders[f] ?? []) {
        if (!(g in folders)) throw new Error(`tier data: ${f} uses ${g}, which is not in its tier`);
        visit(g, [...trail, f]);
      }
      state.set(f, 'done');
    };
    for (const f of Object.keys(folders)) visit(f, []);
  }
}
assertNoCycle();

const rules = [];
TIERS.forEach(({ tier, folders }, i) => {
  const higher = TIERS.slice(i + 1).flatMap((t) => Object.keys(t.folders));
  const own = Object.keys(folders);
  const isEdgeTier = tier === 'edges' || tier === 'main';
  // Files of this tier: its folders' files, less route files below the edge tier.
  const from =
    tier === 'edges'
      ? { path: [folderRe(own), EDGE_FILE] }
      : isEdgeTier
        ? { path: folderRe(own) }
        : { path: folderRe(own), pathNot: EDGE_FILE };
  const upward = [];
  if (higher.length > 0) upward.push(folderRe(higher));
  if (!isEdgeTier) upward.push(EDGE_FILE);
  if (upward.length > 0)
    rules.push({
    name: `upward-from-${tier}`,
    comment: `${tier} imports only from its own tier and lower ones`,
    severity: 'error',
    from,
    to: { path: upward },
  });
  for (const f of own) {
    const others = own.filter((g) => g !== f && !folders[f].includes(g));
    if (others.length === 0) continue;
    rules.push({
      name: `same-tier-${f}`,
      comment: `${f} may use only the ${tier} folders it lists (${folders[f].join(', ') || 'none'})`,
      severity: 'error',
      from: isEdgeTier ? { path: folderRe([f]) } : { path: folderRe([f]), pathNot: EDGE_FILE },
      to: { path: folderRe(others), pathNot: EDGE_FILE },
    });
  }
});

module.exports = {
  forbidden: [
    ...rules,
    {
      name: 'edge-to-edge',
      comment: 'a route file uses the registrars in api/, never another folder’s routes',
      severity: 'error',
      from: { path: `^src/([^/]+)/.*${EDGE_FILE}` },
      to: { path: EDGE_FILE, pathNot: '^src/$1/' },
    },
    {
      name: 'foreign-repository',
      comment: 'a folder reaches another folder’s tables through that folder’s own modules, never its SQL',
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { path: '\\.repo\\.ts$', pathNot: '^src/$1/' },
    },
    {
      name: 'no-circular',
      comment: 'modules import each other in no loop',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'unknown-folder',
      comment: 'every folder under src/ has a tier (add it to TIERS)',
      severity: 'error',
      from: { path: '^src/' },
      to: {
        path: '^src/',
        pathNot: folderRe(TIERS.flatMap((t) => Object.keys(t.folders))),
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts'] },
  },
};
