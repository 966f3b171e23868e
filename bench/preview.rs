//! Link preview drawing (CONTRACT.md 17): the time to draw `/share/{id}.png` for a 20-pin
//! board (the 18 catalogue examples and two 100-point line charts, 3 columns wide, on 10
//! rows), the server's own work behind one request: layout, rasterising with resvg, PNG.
//!
//! `cargo run --release --example preview_bench [FILE]` prints one line per figure:
//! `name: ours=... target=...`, and writes the picture to FILE when one is named (to look
//! at it, or to try other encodings of the same pixels).

use std::{collections::HashMap, time::Instant};

use corkboard::{
    pin_types::PinType,
    pinboards::view::{BoardView, Content, PageView},
    render::preview,
    store::{Pin, Pinboard, PlacedPin, Position, Sharing},
};
use serde_json::json;

fn pin(i: usize, pin_type: &str, config: String) -> Pin {
    Pin {
        title: Some(format!("Pin {i} of {pin_type}")),
        ..Pin::new(format!("p-{i}"), pin_type, config)
    }
}

fn board() -> PageView {
    let mut pins: Vec<Pin> = PinType::ALL
        .iter()
        .enumerate()
        .map(|(i, t)| pin(i, t.as_str(), t.example().to_string()))
        .collect();
    for i in 18..20 {
        let data: Vec<f64> = (0..100).map(|x| f64::from(x * 7 % 23)).collect();
        let labels: Vec<String> = (0..100).map(|x| format!("t{x}")).collect();
        let config = json!({"labels": labels, "series": [{"name": "a", "data": data}]});
        pins.push(pin(i, "line-chart", config.to_string()));
    }
    let placed = pins
        .into_iter()
        .enumerate()
        .map(|(i, pin)| PlacedPin {
            position: Position {
                x: (i as i64 % 4) * 3,
                y: (i as i64 / 4) * 2,
                w: 3,
                h: 2,
            },
            pin,
        })
        .collect();
    PageView {
        content: Content::Board(BoardView {
            board: Pinboard {
                id: "pb-bench".to_owned(),
                title: "Operations".to_owned(),
                description: None,
                tags: Vec::new(),
                sharing: Sharing::default(),
                created_at: 0,
                updated_at: 0,
            },
            placed,
            blocks: HashMap::new(),
        }),
        since: Some("0".to_owned()),
    }
}

fn main() {
    let view = board();
    // The first drawing loads the fonts: measured apart.
    let start = Instant::now();
    let png = preview::png(&view).expect("png");
    let first = start.elapsed();
    let runs = 50;
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            preview::png(&view).expect("png");
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let median = times[runs / 2];
    let worst = times[runs - 1];
    println!(
        "preview_first_png_ms: ours={:.1}",
        first.as_secs_f64() * 1000.0
    );
    println!(
        "preview_png_ms (20 pins, median of {runs}): ours={median:.1} target=50 max={worst:.1}"
    );
    println!("preview_png_bytes: ours={}", png.len());
    if let Some(path) = std::env::args().nth(1) {
        std::fs::write(&path, &png).expect("the picture is written");
    }
}
