-- Trip planning (seed 6.4): hotels, hotel bookings and itineraries.
CREATE TABLE hotels (hotel_id TEXT PRIMARY KEY, city TEXT, name TEXT, price REAL);
CREATE TABLE hotel_bookings (booking_id TEXT PRIMARY KEY, hotel_id TEXT, nights INTEGER);
CREATE TABLE itineraries (itinerary_id TEXT PRIMARY KEY, city TEXT, days INTEGER, plan TEXT);
INSERT INTO hotels VALUES ('H-LIS-1', 'Lisbon', 'Casa Alfama', 120.0), ('H-LIS-2', 'Lisbon', 'Hotel Baixa', 95.0);
