//! The records of the sample dataset: people, teams, projects, tags, documents and the
//! relationships between them. Ids are readable so examples and tests can name them.

pub(super) const PEOPLE: [(&str, &str, &str); 8] = [
    ("person-ana-silva", "Ana Silva", "manager"),
    ("person-ben-okafor", "Ben Okafor", "engineer"),
    ("person-chen-wei", "Chen Wei", "researcher"),
    ("person-dana-kowalski", "Dana Kowalski", "designer"),
    ("person-eli-haddad", "Eli Haddad", "engineer"),
    ("person-farah-nasser", "Farah Nasser", "manager"),
    ("person-gus-lindqvist", "Gus Lindqvist", "engineer"),
    ("person-hana-sato", "Hana Sato", "researcher"),
];

pub(super) const TEAMS: [(&str, &str, &str); 3] = [
    (
        "team-platform",
        "Platform",
        "Runs the core services and the data pipeline",
    ),
    (
        "team-research",
        "Research",
        "Ranking, relevance and user studies",
    ),
    (
        "team-design",
        "Design",
        "Product design and the design system",
    ),
];

pub(super) const PROJECTS: [(&str, &str, &str, &str); 5] = [
    (
        "project-q4-planning",
        "Q4 Planning",
        "active",
        "team-platform",
    ),
    (
        "project-product-launch",
        "Product Launch",
        "active",
        "team-design",
    ),
    (
        "project-search-revamp",
        "Search Revamp",
        "planned",
        "team-research",
    ),
    (
        "project-onboarding-flow",
        "Onboarding Flow",
        "done",
        "team-design",
    ),
    (
        "project-data-pipeline",
        "Data Pipeline",
        "active",
        "team-platform",
    ),
];

pub(super) const TAGS: [&str; 6] = [
    "strategy",
    "engineering",
    "design",
    "research",
    "planning",
    "customer",
];

pub(super) struct SampleDocument {
    pub(super) id: &'static str,
    pub(super) title: &'static str,
    pub(super) status: &'static str,
    pub(super) project: &'static str,
    pub(super) author: &'static str,
    pub(super) tags: &'static [&'static str],
}

pub(super) const DOCUMENTS: [SampleDocument; 12] = [
    SampleDocument {
        id: "doc-product-roadmap",
        title: "Product Roadmap",
        status: "published",
        project: "project-q4-planning",
        author: "person-ana-silva",
        tags: &["strategy", "planning"],
    },
    SampleDocument {
        id: "doc-q4-okrs",
        title: "Q4 OKRs",
        status: "published",
        project: "project-q4-planning",
        author: "person-farah-nasser",
        tags: &["strategy"],
    },
    SampleDocument {
        id: "doc-launch-checklist",
        title: "Launch Checklist",
        status: "in_review",
        project: "project-product-launch",
        author: "person-dana-kowalski",
        tags: &["planning"],
    },
    SampleDocument {
        id: "doc-search-relevance-study",
        title: "Search Relevance Study",
        status: "draft",
        project: "project-search-revamp",
        author: "person-chen-wei",
        tags: &["research"],
    },
    SampleDocument {
        id: "doc-onboarding-wireframes",
        title: "Onboarding Wireframes",
        status: "archived",
        project: "project-onboarding-flow",
        author: "person-dana-kowalski",
        tags: &["design", "customer"],
    },
    SampleDocument {
        id: "doc-pipeline-architecture",
        title: "Pipeline Architecture",
        status: "published",
        project: "project-data-pipeline",
        author: "person-ben-okafor",
        tags: &["engineering"],
    },
    SampleDocument {
        id: "doc-incident-postmortem",
        title: "Incident Postmortem: Ingest Lag",
        status: "published",
        project: "project-data-pipeline",
        author: "person-eli-haddad",
        tags: &["engineering"],
    },
    SampleDocument {
        id: "doc-design-system-guide",
        title: "Design System Guide",
        status: "published",
        project: "project-product-launch",
        author: "person-dana-kowalski",
        tags: &["design"],
    },
    SampleDocument {
        id: "doc-pricing-proposal",
        title: "Pricing Proposal",
        status: "draft",
        project: "project-product-launch",
        author: "person-farah-nasser",
        tags: &["strategy", "customer"],
    },
    SampleDocument {
        id: "doc-api-style-guide",
        title: "API Style Guide",
        status: "in_review",
        project: "project-data-pipeline",
        author: "person-gus-lindqvist",
        tags: &["engineering"],
    },
    SampleDocument {
        id: "doc-ranking-notes",
        title: "Research Notes: Ranking",
        status: "draft",
        project: "project-search-revamp",
        author: "person-hana-sato",
        tags: &["research"],
    },
    SampleDocument {
        id: "doc-q3-retro",
        title: "Q3 Retro Notes",
        status: "archived",
        project: "project-q4-planning",
        author: "person-ana-silva",
        tags: &["planning"],
    },
];

/// (person, team, since)
pub(super) const MEMBERSHIPS: [(&str, &str, &str); 8] = [
    ("person-ana-silva", "team-platform", "2024-02-01"),
    ("person-ben-okafor", "team-platform", "2024-06-15"),
    ("person-eli-haddad", "team-platform", "2025-01-10"),
    ("person-gus-lindqvist", "team-platform", "2025-09-01"),
    ("person-chen-wei", "team-research", "2023-11-20"),
    ("person-hana-sato", "team-research", "2025-03-03"),
    ("person-dana-kowalski", "team-design", "2024-08-19"),
    ("person-farah-nasser", "team-design", "2023-05-02"),
];

pub(super) const LEADS: [(&str, &str); 5] = [
    ("person-ana-silva", "project-q4-planning"),
    ("person-farah-nasser", "project-product-launch"),
    ("person-chen-wei", "project-search-revamp"),
    ("person-dana-kowalski", "project-onboarding-flow"),
    ("person-ben-okafor", "project-data-pipeline"),
];

pub(super) const REFERENCES: [(&str, &str); 5] = [
    ("doc-q4-okrs", "doc-product-roadmap"),
    ("doc-launch-checklist", "doc-design-system-guide"),
    ("doc-pricing-proposal", "doc-product-roadmap"),
    ("doc-incident-postmortem", "doc-pipeline-architecture"),
    ("doc-ranking-notes", "doc-search-relevance-study"),
];
