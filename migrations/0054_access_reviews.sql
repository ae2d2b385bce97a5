-- Access reviews (docs/access-reviews.md): a campaign asks named reviewers whether each holder of
-- a realm role, or each member of an organization, should keep that access; what they decided is
-- applied when the campaign closes (document 2, Limits, "Access reviews": 10,000 items a
-- campaign, 1..20 reviewers, 20 campaigns closed per 30-second run of task access_reviews.close).
create table access_reviews (
  realm_id text not null references realms (id),
  id text not null,
  name text not null,
  scope_type text not null check (scope_type in ('role', 'organization')),
  scope_id text not null,
  reviewer_ids text[] not null check (cardinality(reviewer_ids) between 1 and 20),
  default_decision text not null check (default_decision in ('keep', 'remove')),
  state text not null check (state in ('open', 'closing', 'closed')),
  ends_at timestamptz not null,
  created_by_type text not null,
  created_by_id text,
  created_at timestamptz not null,
  closed_at timestamptz,
  result jsonb,
  primary key (realm_id, id)
);
create index access_reviews_due on access_reviews (ends_at) where state <> 'closed';

-- One row per access under review, snapshotted when the campaign starts: the role assignment or
-- the membership (target_id, also the item's id) of a user. decision null until a reviewer
-- decides; outcome set when the campaign's close handled the item.
create table access_review_items (
  realm_id text not null,
  review_id text not null,
  user_id text not null,
  target_id text not null,
  decision text check (decision in ('keep', 'remove')),
  decided_by text,
  decided_at timestamptz,
  reason text,
  outcome text,
  primary key (realm_id, review_id, target_id),
  foreign key (realm_id, review_id) references access_reviews (realm_id, id)
);
