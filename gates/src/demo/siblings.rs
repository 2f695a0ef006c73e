//! The demo's four fake siblings: what each holds, and the fault each is left in, so one search shows every line the results page can say about a sibling (§4.1, §8.1).
//!
//! The page says four things about a sibling's passages besides showing
//! them (`memoria::Withheld::sentence`, `memoria::Reconciling::sentence`):
//! UNKNOWN ("Calendar did not answer; 2 results withheld."), STALE
//! ("Sheets has a newer version of 1 result; …"), AHEAD ("Docs is behind
//! the version memoria holds of 1 result, as after a restore; …") and a
//! source out of the ranking while it re-announces ("Drive is reconciling:
//! …"). NOT_VISIBLE says nothing, by design. Each sibling
//! here is left in one of those four states; every item holds the word
//! [`DEMO_QUERY`], so that one search shows all four lines beside the
//! visible results. The text was written for this project: the fictional
//! Almendra Studio of `fixtures/team/` planning its spring offsite.

/// memoria's team label in the demo; every sibling host is
/// `acme.<app>.oficina.works` (§6.3).
pub const DEMO_TEAM: &str = "acme";

/// The search that shows every line: each sibling item holds this word.
pub const DEMO_QUERY: &str = "offsite";

/// What a sibling is left showing after the demo's arrangement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Every call is dropped unanswered (`Outage::Refuse`): S2 is UNKNOWN.
    NoAnswer,
    /// One item moved on after memoria fetched it: S2 answers STALE once,
    /// then memoria refetches it and it shows.
    Stale,
    /// One item was restored to an older revision than memoria holds: S2
    /// answers AHEAD once; memoria marks the app for re-announce, which
    /// completes and brings it back.
    Ahead,
    /// The sibling's whole log was restored (its feed answers 410) and its
    /// announce is cut short, so memoria keeps it out of the ranking.
    Reconciling,
}

impl Role {
    /// What the page says while the sibling is in this state, in a few words.
    #[must_use]
    pub fn shows(self) -> &'static str {
        match self {
            Role::NoAnswer => "does not answer: its results are withheld (UNKNOWN)",
            Role::Stale => "has a newer version of one item (STALE, until memoria refetches it)",
            Role::Ahead => {
                "was restored behind memoria's copy of one item (AHEAD, until it re-announces)"
            }
            Role::Reconciling => "is reconciling after a whole-log restore (out of the ranking)",
        }
    }
}

/// One item a sibling holds.
#[derive(Debug, Clone, Copy)]
pub struct DemoItem {
    /// The sibling's item id.
    pub id: &'static str,
    /// Its title.
    pub title: &'static str,
    /// Its Markdown body at each revision, `r1` first; memoria fetches the last.
    pub bodies: &'static [&'static str],
}

/// One fake sibling of the demo.
#[derive(Debug, Clone, Copy)]
pub struct DemoSibling {
    /// The app label, e.g. `sheets`.
    pub app: &'static str,
    /// The state it is left in.
    pub role: Role,
    /// Its items, all team-visible.
    pub items: &'static [DemoItem],
    /// The item the fault is applied to ([`Role::Stale`], [`Role::Ahead`]).
    pub fault_item: &'static str,
}

/// The body [`Role::Stale`]'s item gets after memoria fetched it.
pub const STALE_REVISION_BODY: &str = "# Offsite budget\n\nThe coach company raised its price for the offsite: 1,520 euro for the return trip to Kinsale. Every other line of the offsite budget stands.\n";

/// The four siblings, in app order.
pub const SIBLINGS: &[DemoSibling] = &[
    DemoSibling {
        app: "calendar",
        role: Role::NoAnswer,
        items: &[
            DemoItem {
                id: "ca-offsite-week",
                title: "Offsite: two days in Kinsale",
                bodies: &[
                    "# Offsite: two days in Kinsale\n\nThursday 23 and Friday 24 April. The coach for the offsite leaves Grand Canal Quay at 08:30 and is back by 19:00 on Friday.\n",
                ],
            },
            DemoItem {
                id: "ca-offsite-dinner",
                title: "Offsite dinner",
                bodies: &[
                    "# Offsite dinner\n\nThursday 23 April, 19:30, at the harbour restaurant. A table for fourteen; tell Róisín about allergies before the offsite.\n",
                ],
            },
        ],
        fault_item: "",
    },
    DemoSibling {
        app: "docs",
        role: Role::Ahead,
        items: &[
            DemoItem {
                id: "do-offsite-agenda",
                title: "Offsite agenda",
                bodies: &[
                    "# Offsite agenda\n\nDay one: where the studio stands. Day two: what we build next. A draft; the offsite agenda is open for comments.\n",
                    "# Offsite agenda\n\nDay one, morning: where the studio stands, with the 2026 numbers. Afternoon: a walk to Charles Fort. Day two: what we build next, and who leads it. The offsite agenda is final.\n",
                ],
            },
            DemoItem {
                id: "do-offsite-travel",
                title: "Offsite travel notes",
                bodies: &[
                    "# Offsite travel notes\n\nThe coach stops once, at Cashel. Bring a rain jacket: the offsite walk goes ahead in any weather. Parking at the hotel is free for the two nights.\n",
                ],
            },
        ],
        fault_item: "do-offsite-agenda",
    },
    DemoSibling {
        app: "drive",
        role: Role::Reconciling,
        items: &[DemoItem {
            id: "dr-offsite-photos",
            title: "Offsite photos",
            bodies: &[
                "# Offsite photos\n\nLast year's offsite photos, sorted by day. Ask before posting any of them outside the studio.\n",
            ],
        }],
        fault_item: "",
    },
    DemoSibling {
        app: "sheets",
        role: Role::Stale,
        items: &[
            DemoItem {
                id: "sh-offsite-budget",
                title: "Offsite budget",
                bodies: &[
                    "# Offsite budget\n\n| Line | Euro |\n|---|---:|\n| Coach to Kinsale and back | 1,450 |\n| Two nights at the harbour hotel, 14 rooms | 5,320 |\n| Dinner on the first night | 980 |\n\nThe offsite budget was approved at the March meeting.\n",
                ],
            },
            DemoItem {
                id: "sh-offsite-rooms",
                title: "Offsite room list",
                bodies: &[
                    "# Offsite room list\n\nFourteen rooms at the harbour hotel for the offsite, all on the second floor. Swap rooms among yourselves and tell the desk at check-in.\n",
                ],
            },
        ],
        fault_item: "sh-offsite-budget",
    },
];
