"""The simulated APIs: typed parameters (pydantic) and deterministic responses.

A response depends on the function and its validated arguments alone (a
hash of both seeds every number), like StableToolBench's cached real APIs:
the same call gives the same answer in every episode, coalition and run.
The entities (cities, companies, artists) are fixed lists, so a name that is
not among them is a realistic ``not_found`` error.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CITIES: dict[str, tuple[str, str]] = {
    # name: (country, UTC offset)
    "Oslo": ("Norway", "+01:00"),
    "Lisbon": ("Portugal", "+00:00"),
    "Nairobi": ("Kenya", "+03:00"),
    "Denver": ("United States", "-07:00"),
    "Osaka": ("Japan", "+09:00"),
    "Santiago": ("Chile", "-04:00"),
    "Cairo": ("Egypt", "+02:00"),
    "Perth": ("Australia", "+08:00"),
    "Montreal": ("Canada", "-05:00"),
    "Mumbai": ("India", "+05:30"),
}
COMPANIES: dict[str, str] = {
    "Northwind Traders": "NWT",
    "Contoso Energy": "CTSO",
    "Fabrikam Robotics": "FBRK",
    "Tailspin Air": "TSPN",
    "Litware Health": "LITW",
    "Adatum Foods": "ADTM",
    "Wingtip Toys": "WNGT",
    "Proseware Cloud": "PRSW",
}
ARTISTS: tuple[str, ...] = (
    "The Paper Kites",
    "Lunar Static",
    "Mira Okafor",
    "Velvet Harbour",
    "Jonah Reyes Trio",
    "Glass Animals Club",
    "Sora Nakamura",
    "Copper Lanterns",
)
#: units of a currency per US dollar
RATES: dict[str, float] = {
    "USD": 1.0,
    "EUR": 0.92,
    "GBP": 0.79,
    "JPY": 151.2,
    "CHF": 0.88,
    "NOK": 10.7,
    "CAD": 1.36,
    "INR": 83.1,
}
CONDITIONS = ("sunny", "cloudy", "light rain", "snow", "windy", "fog", "thunderstorms")
GENRES = ("indie folk", "synth-pop", "jazz", "afrobeat", "post-rock", "city pop", "soul")
WORDS_A = ("Silver", "Quiet", "Broken", "Golden", "Paper", "Midnight", "Wild", "Open")
WORDS_B = ("Rivers", "Signals", "Gardens", "Engines", "Letters", "Shadows", "Skies", "Roads")
HOTEL_NAMES = ("Harbour View", "Central Lodge", "Old Town Inn", "Parkside", "Skyline Suites")


class ApiError(Exception):
    """A failed call, as the API reports it: ``kind`` is what the agent sees first."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _rng(*parts: object) -> random.Random:
    digest = hashlib.sha256("|".join(map(str, ("tools-world-1", *parts))).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _city(name: str) -> str:
    for known in CITIES:
        if known.lower() == name.strip().lower():
            return known
    raise ApiError("not_found", f"no city called {name!r}")


def artist_id(name: str) -> str:
    return "ar_" + hashlib.sha256(f"artist:{name}".encode()).hexdigest()[:6]


def _artist(aid: str) -> str:
    for name in ARTISTS:
        if artist_id(name) == aid:
            return name
    raise ApiError("not_found", f"no artist with id {aid!r}")


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CurrentWeather(_Params):
    city: str = Field(description="City name, e.g. Oslo")
    units: Literal["metric", "imperial"] = Field("metric", description="metric (C) or imperial (F)")


class Forecast(_Params):
    city: str = Field(description="City name")
    days: int = Field(ge=1, le=7, description="How many days ahead, 1 to 7")


class AirQuality(_Params):
    city: str = Field(description="City name")


class Timezone(_Params):
    city: str = Field(description="City name")


class Hotels(_Params):
    city: str = Field(description="City name")
    max_price: int = Field(ge=20, le=2000, description="Highest price per night in USD")


class SearchCompany(_Params):
    name: str = Field(description="Company name")


class StockQuote(_Params):
    symbol: str = Field(pattern=r"^[A-Z]{1,5}$", description="Ticker symbol in capitals")


class Convert(_Params):
    amount: float = Field(gt=0, description="Amount to convert")
    from_currency: str = Field(pattern=r"^[A-Z]{3}$", description="ISO code, e.g. USD")
    to_currency: str = Field(pattern=r"^[A-Z]{3}$", description="ISO code, e.g. EUR")


class SearchArtist(_Params):
    name: str = Field(description="Artist or band name")


class TopTracks(_Params):
    artist_id: str = Field(pattern=r"^ar_[0-9a-f]{6}$", description="Id from search_artist")
    limit: int = Field(3, ge=1, le=10, description="How many tracks, 1 to 10")


class ArtistInfo(_Params):
    artist_id: str = Field(pattern=r"^ar_[0-9a-f]{6}$", description="Id from search_artist")


def current_weather(p: CurrentWeather) -> dict[str, Any]:
    city = _city(p.city)
    r = _rng("weather", city)
    celsius = r.randint(-8, 33)
    temp = celsius if p.units == "metric" else round(celsius * 9 / 5 + 32)
    return {"city": city, "temperature": temp, "units": p.units, "condition": r.choice(CONDITIONS)}


def forecast(p: Forecast) -> dict[str, Any]:
    city = _city(p.city)
    days = []
    for d in range(1, p.days + 1):
        r = _rng("forecast", city, d)
        low = r.randint(-10, 24)
        days.append(
            {
                "day": d,
                "high": low + r.randint(3, 11),
                "low": low,
                "condition": r.choice(CONDITIONS),
            }
        )
    return {"city": city, "days": days}


def air_quality(p: AirQuality) -> dict[str, Any]:
    city = _city(p.city)
    aqi = _rng("aqi", city).randint(8, 190)
    level = "good" if aqi <= 50 else "moderate" if aqi <= 100 else "unhealthy"
    return {"city": city, "aqi": aqi, "level": level}


def timezone(p: Timezone) -> dict[str, Any]:
    city = _city(p.city)
    return {"city": city, "country": CITIES[city][0], "utc_offset": CITIES[city][1]}


def hotels(p: Hotels) -> dict[str, Any]:
    city = _city(p.city)
    r = _rng("hotels", city)
    found = []
    for name in HOTEL_NAMES:
        price = r.randrange(45, 400, 5)
        if price <= p.max_price:
            found.append({"name": f"{name} {city}", "price_per_night": price})
    found.sort(key=lambda h: (h["price_per_night"], h["name"]))
    return {"city": city, "hotels": found}


def search_company(p: SearchCompany) -> dict[str, Any]:
    for name, symbol in COMPANIES.items():
        if name.lower() == p.name.strip().lower():
            return {"name": name, "symbol": symbol, "exchange": "NASDAQ"}
    raise ApiError("not_found", f"no company called {p.name!r}")


def stock_quote(p: StockQuote) -> dict[str, Any]:
    if p.symbol not in COMPANIES.values():
        raise ApiError("not_found", f"unknown symbol {p.symbol!r}")
    price = round(_rng("quote", p.symbol).uniform(12, 480), 2)
    return {"symbol": p.symbol, "price": price, "currency": "USD"}


def convert(p: Convert) -> dict[str, Any]:
    for code in (p.from_currency, p.to_currency):
        if code not in RATES:
            raise ApiError("invalid_argument", f"unsupported currency {code!r}")
    rate = RATES[p.to_currency] / RATES[p.from_currency]
    return {
        "amount": p.amount,
        "from": p.from_currency,
        "to": p.to_currency,
        "rate": round(rate, 6),
        "result": round(p.amount * rate, 2),
    }


def search_artist(p: SearchArtist) -> dict[str, Any]:
    for name in ARTISTS:
        if name.lower() == p.name.strip().lower():
            return {"artist_id": artist_id(name), "name": name}
    raise ApiError("not_found", f"no artist called {p.name!r}")


def top_tracks(p: TopTracks) -> dict[str, Any]:
    name = _artist(p.artist_id)
    r = _rng("tracks", name)
    titles: list[str] = []
    while len(titles) < 10:
        title = f"{r.choice(WORDS_A)} {r.choice(WORDS_B)}"
        if title not in titles:
            titles.append(title)
    return {"artist_id": p.artist_id, "tracks": titles[: p.limit]}


def artist_info(p: ArtistInfo) -> dict[str, Any]:
    name = _artist(p.artist_id)
    r = _rng("artist", name)
    country = r.choice(sorted({c for c, _ in CITIES.values()}))
    return {"artist_id": p.artist_id, "name": name, "genre": r.choice(GENRES), "country": country}


@dataclass(frozen=True)
class Api:
    """One function of the catalogue: name, category, parameters, implementation."""

    name: str
    category: str
    description: str
    params: type[_Params]
    run: Callable[[Any], dict[str, Any]]

    def schema(self) -> dict[str, Any]:
        """The OpenAI tools entry for this function."""
        parameters = self.params.model_json_schema()
        parameters.pop("title", None)
        for prop in parameters.get("properties", {}).values():
            prop.pop("title", None)
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": parameters,
            },
        }


CATALOGUE: dict[str, Api] = {
    a.name: a
    for a in (
        Api(
            "get_current_weather",
            "weather",
            "Current temperature and sky of a city.",
            CurrentWeather,
            current_weather,
        ),
        Api(
            "get_forecast", "weather", "Daily highs and lows for the next days.", Forecast, forecast
        ),
        Api(
            "get_air_quality",
            "weather",
            "Air quality index (AQI) of a city.",
            AirQuality,
            air_quality,
        ),
        Api("get_timezone", "travel", "Country and UTC offset of a city.", Timezone, timezone),
        Api(
            "search_hotels",
            "travel",
            "Hotels in a city up to a nightly price, cheapest first.",
            Hotels,
            hotels,
        ),
        Api(
            "search_company",
            "finance",
            "Find a listed company's ticker symbol by name.",
            SearchCompany,
            search_company,
        ),
        Api(
            "get_stock_quote",
            "finance",
            "Last price of a ticker symbol, in USD.",
            StockQuote,
            stock_quote,
        ),
        Api(
            "convert_currency",
            "finance",
            "Convert an amount between two currencies.",
            Convert,
            convert,
        ),
        Api("search_artist", "music", "Find an artist's id by name.", SearchArtist, search_artist),
        Api("get_top_tracks", "music", "An artist's most played tracks.", TopTracks, top_tracks),
        Api(
            "get_artist_info",
            "music",
            "An artist's genre and home country.",
            ArtistInfo,
            artist_info,
        ),
    )
}
CATEGORIES: dict[str, list[str]] = {}
for _api in CATALOGUE.values():
    CATEGORIES.setdefault(_api.category, []).append(_api.name)
